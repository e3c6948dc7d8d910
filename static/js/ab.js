// Compare A/B: Q votes A, W votes B, E a tie (seed 003's hotkeys). A key pressed while a vote
// is out is ignored (htmx also disables the buttons then), so a double press stores one vote;
// the server refuses a second vote on the same pair anyway.
(function () {
  var keys = { q: "vote-left", w: "vote-right", e: "vote-tie" };
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    var tag = target && target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    var id = keys[event.key.toLowerCase()];
    var form = document.getElementById("vote-form");
    if (!id || !form) return;
    event.preventDefault();
    if (form.classList.contains("htmx-request")) return;
    var button = document.getElementById(id);
    // A click, so htmx sends the button's name and value (winner) with the form.
    if (button && !button.disabled) button.click();
  });
})();
