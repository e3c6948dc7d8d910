// Evaluate: keys drive the card's form (1-5 rate and go to the next card, or stay with the
// "stay" setting; T tags, N note, J next, K previous, Esc leaves a field). Every action is the
// same form submission the buttons make, sent by htmx, so the next card comes without a reload;
// a key pressed while a request is out waits for its answer.
// The comma-separated tags input becomes chips with an autocompleted "add a tag" field.
(function () {
  var pending = [];

  function form() { return document.getElementById("rate-form"); }
  function busy() { var f = form(); return f && f.classList.contains("htmx-request"); }
  function typing(el) {
    if (!el) return false;
    var tag = el.tagName;
    if (tag === "TEXTAREA" || tag === "SELECT" || el.isContentEditable) return true;
    return tag === "INPUT" && el.type !== "radio" && el.type !== "checkbox";
  }
  function act(fn) { if (busy() || pending.length) pending.push(fn); else fn(); }
  // A click, not requestSubmit(button): htmx sends the button's name and value (then=next)
  // for the button it saw clicked.
  function submit(buttonId) {
    var button = form() && document.getElementById(buttonId);
    if (!button) return;
    // A card swapped in a moment ago: make sure htmx has taken its form over (no page reload).
    if (window.htmx) window.htmx.process(form());
    button.click();
  }
  function autosave() {
    var el = document.getElementById("autosave");
    if (el && window.htmx) window.htmx.trigger(el, "autosave");
  }

  function tagsOf(input) {
    return input.value.split(",").map(function (t) { return t.trim(); }).filter(Boolean);
  }
  function renderChips(input, box) {
    box.querySelectorAll(".chip").forEach(function (chip) { chip.remove(); });
    var add = box.querySelector("#tag-add");
    tagsOf(input).forEach(function (tag) {
      var chip = document.createElement("span");
      chip.className = "chip";
      chip.textContent = tag;
      var remove = document.createElement("button");
      remove.type = "button";
      remove.className = "chip__remove";
      remove.setAttribute("aria-label", "Remove tag " + tag);
      remove.textContent = "×";
      remove.addEventListener("click", function () {
        input.value = tagsOf(input).filter(function (t) { return t !== tag; }).join(", ");
        renderChips(input, box);
        autosave();
      });
      chip.appendChild(remove);
      box.insertBefore(chip, add);
    });
  }
  function enhanceTags(root) {
    var input = root.querySelector ? root.querySelector("#tags-input") : null;
    if (!input || input.dataset.chips) return;
    input.dataset.chips = "1";
    input.type = "hidden";
    var box = document.createElement("div");
    box.className = "chips";
    box.id = "tag-chips";
    var add = document.createElement("input");
    add.type = "text";
    add.id = "tag-add";
    add.setAttribute("list", "tag-options");
    add.setAttribute("autocomplete", "off");
    add.setAttribute("aria-label", "Add a tag (Enter adds it)");
    add.placeholder = "add a tag, Enter";
    box.appendChild(add);
    input.insertAdjacentElement("afterend", box);
    var label = root.querySelector('label[for="tags-input"]');
    if (label) label.setAttribute("for", "tag-add");
    renderChips(input, box);
    add.addEventListener("keydown", function (event) {
      if (event.key !== "Enter" && event.key !== ",") return;
      event.preventDefault();
      var tag = add.value.replace(/,/g, " ").trim();
      if (!tag) return;
      var tags = tagsOf(input);
      if (tags.indexOf(tag) < 0) tags.push(tag);
      input.value = tags.join(", ");
      add.value = "";
      renderChips(input, box);
      autosave();
    });
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    if (event.key === "Escape" && typing(target)) { target.blur(); return; }
    if (typing(target) || !form()) return;
    var key = event.key.toLowerCase();
    if (key >= "1" && key <= "5" && key.length === 1) {
      event.preventDefault();
      act(function () {
        var radio = document.getElementById("rate-" + key);
        if (!radio) return;
        radio.checked = true;
        // A rating moves to the next card unless the person chose to stay (the filters' stay).
        var stay = form().querySelector('input[name="f_stay"]');
        submit(stay ? "save-card" : "next-card");
      });
    } else if (key === "j") {
      event.preventDefault();
      act(function () { submit("next-card"); });
    } else if (key === "k") {
      event.preventDefault();
      act(function () { submit("prev-card"); });
    } else if (key === "t") {
      event.preventDefault();
      act(function () {
        var add = document.getElementById("tag-add") || document.getElementById("tags-input");
        if (add) add.focus();
      });
    } else if (key === "n") {
      event.preventDefault();
      act(function () { var notes = document.getElementById("notes"); if (notes) notes.focus(); });
    }
  });

  // The next queued key runs once the card it acts on is in the page.
  document.addEventListener("htmx:afterSettle", function (event) {
    if (event.target && event.target.id === "card" && pending.length) pending.shift()();
  });
  document.addEventListener("htmx:responseError", function () { pending = []; });
  document.addEventListener("htmx:sendError", function () { pending = []; });

  if (window.htmx) window.htmx.onLoad(enhanceTags);
  else document.addEventListener("DOMContentLoaded", function () { enhanceTags(document); });
})();
