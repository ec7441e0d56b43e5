// An htmx action the server could not complete (a 5xx: the database down, a bug) or could not
// reach: htmx swaps nothing then, so what the reviewer typed stays in the page. Say so, politely,
// in an alert above the page; the next action that succeeds removes it. (4xx replies are the
// pages' own: they carry their message.)
(() => {
  const show = (text) => {
    let box = document.getElementById("action-error");
    if (!box) {
      box = document.createElement("p");
      box.id = "action-error";
      box.className = "message-error";
      box.setAttribute("role", "alert");
      document.querySelector("main")?.prepend(box);
    }
    box.textContent = text;
  };
  document.addEventListener("htmx:responseError", (event) => {
    const xhr = event.detail.xhr;
    if (xhr.status < 500) return;
    const retry = xhr.getResponseHeader("Retry-After");
    const why = xhr.status === 503 ? "ClaimDesk cannot reach its database for a moment" : "the server had a problem";
    show(`Sorry, that was not saved: ${why}. What you typed is still here; ` +
         `please try again${retry ? ` in about ${retry} seconds` : " shortly"}.`);
  });
  document.addEventListener("htmx:sendError", () => {
    show("Sorry, that was not saved: the server could not be reached. What you typed is still here; please try again shortly.");
  });
  document.addEventListener("htmx:afterRequest", (event) => {
    if (event.detail.successful) document.getElementById("action-error")?.remove();
  });
})();
