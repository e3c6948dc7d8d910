// New-run form: enable "Start run" only when a judge (or No judge), a target and a collection are picked.
// Without JavaScript the button stays enabled and the server's validation answers instead.
(function () {
  var form = document.getElementById("new-run-form");
  if (!form) return;
  var button = document.getElementById("start-run");
  var defaultButton = form.querySelector(".default-submit");
  var hint = document.getElementById("start-hint");

  function anyChecked(name) { return form.querySelector('input[name="' + name + '"]:checked') !== null; }
  function anyExtra() {
    return Array.prototype.some.call(form.querySelectorAll('input[name^="extra_models_"]'),
      function (el) { return el.value.trim() !== ""; });
  }
  function missing() {
    var out = [];
    var provider = document.getElementById("judgeProviderId");
    var model = document.getElementById("judgeModel");
    var noJudge = document.getElementById("noJudge");
    if (!(noJudge && noJudge.checked) && (!provider.value || !model.value.trim())) {
      out.push("a judge model (or No judge)");
    }
    if (!anyChecked("target") && !anyExtra()) out.push("at least one target model");
    if (!anyChecked("collectionIds")) out.push("at least one collection");
    return out;
  }
  function update() {
    var need = missing();
    button.disabled = need.length > 0;
    if (defaultButton) defaultButton.disabled = button.disabled;
    var queueButton = document.getElementById("queue-run");
    if (queueButton) queueButton.disabled = button.disabled;
    hint.textContent = need.length ? "To start, pick " + need.join(", ") + "." : "Ready to start.";
    // Show how many models are picked on each provider's (possibly closed) group.
    form.querySelectorAll("[data-count-for]").forEach(function (el) {
      var group = el.closest("details");
      var n = group.querySelectorAll('input[name="target"]:checked').length;
      el.textContent = n ? n + " picked" : "";
    });
  }
  var preview = document.getElementById("run-id-preview");
  var nameField = document.getElementById("name");
  if (preview && nameField) {
    nameField.addEventListener("input", function () {
      preview.textContent = nameField.value.trim().replace(/[^A-Za-z0-9._-]+/g, "-") || "run";
    });
  }
  form.addEventListener("input", update);
  form.addEventListener("change", update);
  document.addEventListener("htmx:afterSettle", update);
  update();
})();
// A provider group opened for the person (the first one) closes itself when its server is not
// reachable: the summary then says "not reachable" in grey and the other groups stay in view.
document.addEventListener("htmx:afterSettle", function () {
  document.querySelectorAll("details[data-opened-for-you]").forEach(function (group) {
    if (group.querySelector("[data-unreachable]")) {
      group.open = false;
      group.removeAttribute("data-opened-for-you");
    } else if (group.querySelector(".target-list")) {
      group.removeAttribute("data-opened-for-you");
    }
  });
});
