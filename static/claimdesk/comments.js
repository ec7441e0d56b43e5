// A refused comment (400: empty or too long) comes back as the thread with the form's error:
// swap it in like any reply, so the author reads why, instead of htmx dropping it as a failure.
document.addEventListener("htmx:beforeSwap", (event) => {
  if (event.detail.xhr.status === 400 && event.detail.target && event.detail.target.id === "comments") {
    event.detail.shouldSwap = true;
    event.detail.isError = false;
  }
});
