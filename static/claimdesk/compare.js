// Pairwise comparison: 1 left, 2 right, 3 both right, 4 both wrong, on the first claim not yet decided.
document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || /^(INPUT|TEXTAREA|SELECT)$/.test(event.target.tagName)) return;
  const form = document.querySelector(".choose-form");
  const button = form && form.querySelector(`button[data-key="${event.key}"]`);
  if (!button) return;
  event.preventDefault();
  form.requestSubmit(button);
});
