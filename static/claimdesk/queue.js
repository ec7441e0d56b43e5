// The queue: `n` starts reviewing (leases the next free item), `/` focuses search.
(function () {
  "use strict";
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.target.closest("input, textarea, select")) return;
    if (event.key === "n") {
      document.getElementById("start-reviewing")?.click();
      event.preventDefault();
    } else if (event.key === "/") {
      document.querySelector(".filters input[name=q]")?.focus();
      event.preventDefault();
    }
  });
})();
