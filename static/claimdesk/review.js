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

  // `?`: a modal dialog (backdrop, focus kept inside, Esc closes it: the browser's <dialog>).
  function toggleHelp() {
    const help = document.getElementById("help");
    if (help.open) help.close();
    else help.showModal();
  }

  // `g`: the annotation guidelines in a side panel, open or closed as last left in this browser.
  const GUIDELINES_KEY = "claimdesk.guidelinesOpen";
  function showGuidelines(open) {
    const aside = document.getElementById("guidelines");
    if (!aside) return;
    aside.hidden = !open;
    // At desktop width it lies over the passages, from their top down: the head and the toolbar
    // above it keep their clicks (their height varies with alerts and the pinned answer).
    const columns = document.querySelector(".columns");
    const wide = window.matchMedia("(min-width: 900px)").matches;
    aside.style.top = wide && columns ? `${Math.max(8, Math.round(columns.getBoundingClientRect().top))}px` : "";
    for (const button of document.querySelectorAll(".review-head .guidelines-toggle")) {
      button.setAttribute("aria-expanded", String(open));
    }
  }
  window.addEventListener("resize", () => {
    if (document.getElementById("guidelines")?.hidden === false) showGuidelines(true);
  });
  function toggleGuidelines() {
    const open = document.getElementById("guidelines")?.hidden === true;
    localStorage.setItem(GUIDELINES_KEY, open ? "1" : "0");
    showGuidelines(open);
  }

  // --- notes: kept as drafts on the server as they are typed ---------------------------------
  // A note box's text is posted to its draft URL DRAFT_DELAY_MS after the last change (and at
  // once on Esc, blur or any action key), so a redraw, a move, a reload or leaving keeps it; the
  // page renders the draft back. Actions wait for the saves in flight: `f` finishes with them.
  const DRAFT_DELAY_MS = 400;
  const draftTimers = new Map();
  let draftsSaving = Promise.resolve();

  function saveDraft(box) {
    clearTimeout(draftTimers.get(box));
    draftTimers.delete(box);
    if (box.dataset.sent === box.value) return draftsSaving;
    box.dataset.sent = box.value;
    const body = new FormData();
    body.append("note", box.value);
    draftsSaving = draftsSaving.then(() => fetch(box.dataset.draftUrl, {
      method: "POST", body, headers: { "X-CSRFToken": csrf() }, keepalive: true,
    })).catch(() => {});
    return draftsSaving;
  }

  function flushDrafts() {
    for (const box of Array.from(draftTimers.keys())) saveDraft(box);
    return draftsSaving;
  }

  function noteState(box) {
    const card = box.closest(".claim-card");
    const unsaved = box.value !== (box.dataset.saved || "");
    const decided = card?.classList.contains("decided");
    const state = card?.querySelector(".draft-state");
    if (state) state.textContent = unsaved ? (decided ? "draft kept: not saved with the decision yet" : "draft kept: goes with your decision") : "";
    const save = card?.querySelector(".save-note");
    if (save) save.hidden = !unsaved;
  }

  document.addEventListener("input", (event) => {
    const box = event.target.closest("textarea[data-draft-url]");
    if (!box) return;
    noteState(box);
    clearTimeout(draftTimers.get(box));
    draftTimers.set(box, setTimeout(() => saveDraft(box), DRAFT_DELAY_MS));
  });
  document.addEventListener("focusout", (event) => {
    const box = event.target.closest?.("textarea[data-draft-url]");
    if (box && draftTimers.has(box)) saveDraft(box);
  });

  // Text typed but not saved with any decision, on claims other than the one being decided.
  function unsavedNotes() {
    return Array.from(document.querySelectorAll("textarea[data-draft-url]"))
      .filter((box) => box.value.trim() && box.value !== (box.dataset.saved || ""))
      .map((box) => box.closest(".claim-card")?.querySelector(".claim-top b")?.textContent || "a claim");
  }

  // n and s leave the answer: the drafts stay on the server, but an in-page dialog says so before
  // going (Enter leaves, Esc stays; keys do nothing behind it).
  let leaving = null;
  function leaveAsking(selector) {
    const button = document.querySelector(selector);
    const dialog = document.getElementById("leave-confirm");
    if (!button) return;
    const notes = unsavedNotes();
    if (!notes.length || !dialog) return flushDrafts().then(() => button.click());
    const which = notes.length === 1 ? `Your note on ${notes[0]} is` : `Your notes on ${notes.join(", ")} are`;
    document.getElementById("leave-notes").textContent =
      `${which} not saved with a decision. ${notes.length === 1 ? "It stays a draft" : "They stay drafts"}, shown again when you come back to this answer.`;
    leaving = button;
    dialog.returnValue = "";
    dialog.showModal();
    dialog.querySelector("button[value=leave]").focus();
  }
  document.addEventListener("close", (event) => {
    // "close" is queued: a late one, from a dialog already opened again, is not this answer's.
    if (event.target.id !== "leave-confirm" || event.target.open) return;
    const button = leaving;
    leaving = null;
    if (event.target.returnValue === "leave" && button) flushDrafts().then(() => button.click());
  }, true);  // "close" does not bubble

  // After `f`, the next answer opens unless the reviewer chose to stay (kept in this browser).
  const STAY_KEY = "claimdesk.stayAfterFinish";
  function applyStaySetting() {
    const stay = localStorage.getItem(STAY_KEY) === "1";
    const box = document.getElementById("stay-after-finish");
    if (box) box.checked = stay;
    const then = document.querySelector("#finish-form input[name=then]");
    if (then) then.value = stay ? "stay" : "next";
  }
  document.addEventListener("change", (event) => {
    if (event.target.id !== "stay-after-finish") return;
    localStorage.setItem(STAY_KEY, event.target.checked ? "1" : "0");
    applyStaySetting();
  });

  function setOverturn(armed) {
    overturnArmed = armed;
    document.body.classList.toggle("overturn-armed", armed);
  }

  document.addEventListener("keydown", (event) => {
    const noteBox = event.target.closest?.("textarea[data-draft-url]");
    if (noteBox && event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      // Ctrl+Enter in a note: on a decided claim, save the note (its decision again, with it).
      const save = noteBox.closest(".claim-card")?.querySelector(".save-note");
      if (save) flushDrafts().then(() => submit(save));
      event.preventDefault();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const typing = event.target.closest("input:not([type=checkbox]), textarea, select");  // a ticked box takes no keys
    if (event.key === "Escape") {
      setOverturn(false);
      if (noteBox) saveDraft(noteBox);
      if (typing) event.target.blur();
      document.getElementById("reopen-confirm")?.remove();
      return;
    }
    if (typing) return;
    if (document.getElementById("leave-confirm")?.open) return;  // Enter and Esc are the dialog's
    if (document.getElementById("help")?.open && event.key !== "?") return;  // the dialog has the keys
    // A held key repeats: fine for moving, never for an action (one press, one request).
    if (event.repeat && event.key !== "j" && event.key !== "k") return;
    if (overturnArmed && /^[1-4]$/.test(event.key)) {
      setOverturn(false);
      const label = LABELS[Number(event.key) - 1];
      flushDrafts().then(() => click(`button[name=overturn_to][value=${label}]`));
      event.preventDefault();
      return;
    }
    setOverturn(false);
    const actions = {
      j: () => move(1),
      k: () => move(-1),
      c: () => flushDrafts().then(() => click("button[name=decision][value=confirm]")),
      o: () => { if (selectedCard()?.querySelector("button[name=overturn_to]")) setOverturn(true); },
      e: () => selectedCard()?.querySelector("textarea[name=note]")?.focus(),
      // On an adjudicated answer the first `u` asks (the server's reopen question); a second confirms.
      u: () => flushDrafts().then(() => submit(document.querySelector("#reopen-form button") || document.querySelector("#undo-form button"))),
      f: () => flushDrafts().then(() => submit(document.querySelector("#finish-form button:not([disabled])"))),
      n: () => leaveAsking("#next-form button"),
      t: () => document.querySelector("#take-form button")?.click(),
      s: () => leaveAsking("#skip-form button"),
      g: toggleGuidelines,
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
    if (event.target.closest(".guidelines-toggle")) return toggleGuidelines();
    const card = event.target.closest(".claim-card");
    if (card && !event.target.closest("button, textarea, input, summary")) return select(card.dataset.claim);
    const seg = event.target.closest(".claim-seg");
    if (seg && window.getSelection().isCollapsed) select(seg.dataset.claims.split(" ").pop());
  });

  // Selecting answer text fills the "add a claim the judge missed" form with its exact offsets
  // (the server widens them to whole words): in the pinned answer by mouse or finger, or in the
  // form's read-only copy of the answer by keyboard (Shift+arrows) or finger too.
  function fillClaim(start, end, text) {
    const form = document.getElementById("add-claim");
    if (!form || end <= start) return;
    form.elements.start.value = start;
    form.elements.end.value = end;
    form.elements.text.value = text;
    form.classList.add("filled");
  }
  function fillFromCopy(box) {
    if (box?.matches?.("textarea.select-source")) {
      fillClaim(box.selectionStart, box.selectionEnd, box.value.slice(box.selectionStart, box.selectionEnd));
    }
  }
  // The copy takes a caret and a selection but no edit (a read-only box takes neither in Chromium).
  document.addEventListener("beforeinput", (event) => {
    if (event.target.matches?.("textarea.select-source")) event.preventDefault();
  });
  for (const type of ["select", "keyup", "pointerup"]) {
    document.addEventListener(type, (event) => fillFromCopy(event.target), true);
  }
  document.addEventListener("selectionchange", () => {
    if (document.activeElement?.matches("textarea.select-source")) return fillFromCopy(document.activeElement);
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
    if (start === null || end === null) return;
    fillClaim(start, end, selection.toString());
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
    if (event.detail.target?.id === "comments") return;  // a comment moves no claim
    applyStaySetting();
    showGuidelines(localStorage.getItem(GUIDELINES_KEY) === "1");  // the swapped toolbar's button
    select(panel()?.dataset.selected, { scroll: true });
    document.querySelector("#reopen-form button")?.focus();
  });
  // htmx swaps a 409 (a conflict) too, so the reviewer sees the current state and the message;
  // it is an expected answer, not a failure for htmx to log as an error.
  document.addEventListener("htmx:beforeSwap", (event) => {
    if (event.detail.xhr.status === 409) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
  document.addEventListener("DOMContentLoaded", () => {
    applyStaySetting();
    showGuidelines(localStorage.getItem(GUIDELINES_KEY) === "1");
    if (location.hash === "#comments") document.getElementById("comments")?.setAttribute("open", "");
    select(panel()?.dataset.selected, { scroll: true });
    document.querySelector("#reopen-form button")?.focus();
  });
})();
