// The review page, keyboard first. Everything here also exists as a button or form; this file
// only makes it faster. No inline script (the page runs under a strict Content-Security-Policy).
(function () {
  "use strict";

  const LABELS = ["SUPPORTED", "PARTIALLY_SUPPORTED", "CONTRADICTED", "UNSUPPORTED"];
  const LEASE_RENEW_MS = 30000;
  let overturnArmed = false;

  const panel = () => document.getElementById("review-panel");
  const cards = () => Array.from(document.querySelectorAll(".claim-card[data-claim]"));
  const selectedCard = () => document.querySelector(".claim-card.selected");
  const csrf = () => document.querySelector("[name=csrfmiddlewaretoken]")?.value || "";

  function select(claimId, { scroll = true } = {}) {
    if (!claimId) return;
    for (const card of cards()) card.classList.toggle("selected", card.dataset.claim === String(claimId));
    for (const seg of document.querySelectorAll(".seg[data-claims]")) {
      seg.classList.toggle("sel", seg.dataset.claims.split(" ").includes(String(claimId)));
    }
    panel().dataset.selected = claimId;
    if (!scroll) return;
    const card = selectedCard();
    card?.focus({ preventScroll: true });  // focus follows j/k (screen readers read the card)
    card?.scrollIntoView({ block: "nearest" });
    // Each column scrolls on its own (desktop): the evidence comes into view beside its card. When
    // the columns are stacked (phone) moving the page to the passages would lose the card.
    const evidence = document.querySelector(".evidence-seg.sel");
    if (evidence && window.matchMedia("(min-width: 900px)").matches) {
      const smooth = !window.matchMedia("(prefers-reduced-motion: reduce)").matches;
      evidence.scrollIntoView({ block: "center", behavior: smooth ? "smooth" : "auto" });
    }
  }

  function move(step) {
    const all = cards();
    if (!all.length) return;
    const index = all.indexOf(selectedCard());
    const next = all[Math.min(Math.max(index + step, 0), all.length - 1)] || all[0];
    select(next.dataset.claim);
  }

  // htmx wires up swapped-in content when the swap settles (~20 ms later): a key pressed before
  // then would submit the new panel's form the plain way, a whole-page reload. Wire it now
  // (htmx.process skips what is already wired).
  function submit(button) {
    if (!button) return;
    const form = button.closest("form");
    if (form && window.htmx) window.htmx.process(form);
    button.click();
  }

  function click(selector) {
    submit((selectedCard() || document).querySelector(selector));
  }

  function toggleHelp() {
    const help = document.getElementById("help");
    help.hidden = !help.hidden;
  }

  function setOverturn(armed) {
    overturnArmed = armed;
    document.body.classList.toggle("overturn-armed", armed);
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const typing = event.target.closest("input, textarea, select");
    if (event.key === "Escape") {
      setOverturn(false);
      document.getElementById("help").hidden = true;
      if (typing) event.target.blur();
      return;
    }
    if (typing) return;
    // A held key repeats: fine for moving, never for an action (one press, one request).
    if (event.repeat && event.key !== "j" && event.key !== "k") return;
    if (overturnArmed && /^[1-4]$/.test(event.key)) {
      setOverturn(false);
      click(`button[name=overturn_to][value=${LABELS[Number(event.key) - 1]}]`);
      event.preventDefault();
      return;
    }
    setOverturn(false);
    const actions = {
      j: () => move(1),
      k: () => move(-1),
      c: () => click("button[name=decision][value=confirm]"),
      o: () => { if (selectedCard()?.querySelector("button[name=overturn_to]")) setOverturn(true); },
      e: () => selectedCard()?.querySelector("textarea[name=note]")?.focus(),
      u: () => submit(document.querySelector("#undo-form button")),
      f: () => submit(document.querySelector("#finish-form button:not([disabled])")),
      n: () => document.querySelector("#next-form button")?.click(),
      t: () => document.querySelector("#take-form button")?.click(),
      s: () => document.querySelector("#skip-form button")?.click(),
      "?": toggleHelp,
    };
    const action = actions[event.key];
    if (action) {
      action();
      event.preventDefault();
    }
  });

  document.addEventListener("click", (event) => {
    if (event.target.closest(".help-toggle")) return toggleHelp();
    const card = event.target.closest(".claim-card");
    if (card && !event.target.closest("button, textarea, input, summary")) return select(card.dataset.claim);
    const seg = event.target.closest(".claim-seg");
    if (seg && window.getSelection().isCollapsed) select(seg.dataset.claims.split(" ").pop());
  });

  // Selecting answer text fills the "add a claim the judge missed" form with its exact offsets.
  document.addEventListener("mouseup", () => {
    const selection = window.getSelection();
    const answer = document.getElementById("answer-text");
    const form = document.getElementById("add-claim");
    if (!answer || !form || selection.isCollapsed || !answer.contains(selection.anchorNode)) return;
    const offset = (node, within) => {
      const seg = (node.nodeType === Node.TEXT_NODE ? node.parentElement : node).closest(".seg");
      return seg ? Number(seg.dataset.start) + within : null;
    };
    const range = selection.getRangeAt(0);
    const start = offset(range.startContainer, range.startOffset);
    const end = offset(range.endContainer, range.endOffset);
    if (start === null || end === null || end <= start) return;
    form.elements.start.value = start;
    form.elements.end.value = end;
    form.elements.text.value = selection.toString();
    form.classList.add("filled");
  });

  // Keep the lease while the page is open; say so if it was lost; give it back on leaving.
  setInterval(async () => {
    const p = panel();
    if (!p || p.dataset.holdsLease !== "1") return;
    const response = await fetch(p.dataset.leaseUrl, { method: "POST", headers: { "X-CSRFToken": csrf() } });
    if (response.status === 409) {
      p.dataset.holdsLease = "0";
      p.insertAdjacentHTML("afterbegin", '<p class="error" role="alert">Your lease on this answer expired; reload to take it again.</p>');
    }
  }, LEASE_RENEW_MS);

  window.addEventListener("pagehide", () => {
    const p = panel();
    if (!p || p.dataset.holdsLease !== "1") return;
    const body = new FormData();
    body.append("csrfmiddlewaretoken", csrf());
    body.append("beacon", "1");
    navigator.sendBeacon(p.dataset.releaseUrl, body);
  });

  document.addEventListener("htmx:afterSwap", (event) => {
    if (event.detail.target?.id !== "comments") select(panel()?.dataset.selected, { scroll: true });  // a comment moves no claim
  });
  // htmx swaps a 409 (a conflict) too, so the reviewer sees the current state and the message;
  // it is an expected answer, not a failure for htmx to log as an error.
  document.addEventListener("htmx:beforeSwap", (event) => {
    if (event.detail.xhr.status === 409) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
  document.addEventListener("DOMContentLoaded", () => select(panel()?.dataset.selected, { scroll: true }));
})();
