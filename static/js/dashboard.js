// New-run form: enable "Start run" only when a judge, a target and a collection are picked.
// Without JavaScript the button stays enabled and the server's validation answers instead.
(function () {
  var form = document.getElementById("new-run-form");
  if (!form) return;
  var button = document.getElementById("start-run");
  var hint = document.getElementById("start-hint");

  function anyChecked(name) { return form.querySelector('input[name="' + name + '"]:checked') !== null; }
  function anyExtra() {
    return Array.prototype.some.call(form.querySelectorAll('input[name^="extra_models_"]'),
      function (el) { return el.value.trim() !== ""; });
  }
  function missing() {
    var out = [];
    if (!form.judge_provider.value || !form.judge_model.value.trim()) out.push("a judge model");
    if (!anyChecked("target") && !anyExtra()) out.push("at least one target model");
    if (!anyChecked("collection")) out.push("at least one collection");
    return out;
  }
  function update() {
    var need = missing();
    button.disabled = need.length > 0;
    hint.textContent = need.length ? "To start, pick " + need.join(", ") + "." : "Ready to start.";
    // Show how many models are picked on each provider's (possibly closed) group.
    form.querySelectorAll("[data-count-for]").forEach(function (el) {
      var group = el.closest("details");
      var n = group.querySelectorAll('input[name="target"]:checked').length;
      el.textContent = n ? n + " picked" : "";
    });
  }
  form.addEventListener("input", update);
  form.addEventListener("change", update);
  document.addEventListener("htmx:afterSettle", update);
  update();
})();
