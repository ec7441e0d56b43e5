// Evidence-level labels on the review page: selecting text in a passage fills the selected claim's
// evidence form with the span's passage and character offsets (code points, as the server counts);
// `m` goes to that form, so the whole mark can be made from the keyboard too.
(() => {
  const codePoints = (text) => Array.from(text).length;
  const selectedForm = () => document.querySelector(".claim-card.selected form.evidence-mark");

  document.addEventListener("selectionchange", () => {
    const selection = window.getSelection();
    if (selection.isCollapsed || !selection.rangeCount) return;
    const range = selection.getRangeAt(0);
    const text = range.startContainer.parentElement?.closest(".passage-text");
    const form = selectedForm();
    if (!text || !form || !text.contains(range.endContainer)) return;
    const before = document.createRange();
    before.setStart(text, 0);
    before.setEnd(range.startContainer, range.startOffset);
    const start = codePoints(before.toString());
    const end = start + codePoints(range.toString());
    if (end <= start) return;
    form.closest("details").open = true;
    form.elements.passage.value = text.dataset.pid;
    form.elements.start.value = start;
    form.elements.end.value = end;
    form.querySelector(".evidence-selection").textContent = `${text.dataset.pid}: “${range.toString()}”`;
  });

  document.addEventListener("keydown", (event) => {
    if (event.key !== "m" || event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
    if (event.target.closest("input, textarea, select")) return;
    const form = selectedForm();
    if (!form) return;
    form.closest("details").open = true;
    (form.elements.passage.value ? form.elements.stance : form.elements.passage).focus();
    event.preventDefault();
  });
})();
