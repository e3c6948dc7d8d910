// Compare A/B: Q votes A, W votes B, E a tie (LLM Runner's hotkeys), U undoes my last vote. A key
// pressed while a vote is out is ignored; a press that still gets through posts the same pair
// token again, which the server answers with the first vote (nothing stored on the next pair). "Out" lasts until the next pair is swapped in; not the form's htmx-request
// class, which htmx copies onto the next pair's form until it settles.
(function () {
  var keys = { q: "vote-left", w: "vote-right", e: "vote-tie", u: "ab-undo" };
  var voting = false;
  // A pair must be on screen this long before a key votes on it: a key pressed twice 40 ms
  // apart would otherwise land its second press on the next pair, which nobody has read.
  var SETTLE_MS = 250;
  var shownAt = 0;
  // The vote is in once the next pair is swapped in (or the request failed).
  function ready() {
    var pair = document.querySelector("#pair article");
    if (pair) pair.dataset.ready = "1";  // keys vote on it from now on
  }
  document.addEventListener("htmx:afterSwap", function (event) {
    if (!event.target || event.target.id !== "pair") return;
    voting = false;
    shownAt = Date.now();
    window.setTimeout(ready, SETTLE_MS);
  });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ready);
  else ready();
  ["htmx:responseError", "htmx:sendError", "htmx:timeout"].forEach(function (name) {
    document.addEventListener(name, function () { voting = false; });
  });
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    var tag = target && target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    var id = keys[event.key.toLowerCase()];
    var button = id && document.getElementById(id);
    var form = button && button.form;
    if (!id || !form) return;
    event.preventDefault();
    if (voting || Date.now() - shownAt < SETTLE_MS) return;
    // The pair may have been swapped in a moment ago: make sure htmx has taken the form over, so
    // the click is its request and never a plain page submission.
    if (window.htmx) window.htmx.process(form);
    voting = true;  // until htmx:afterRequest (a second press in the same instant is ignored)
    // A click, so htmx sends the button's name and value (winner) with the form.
    button.click();
  });
})();
