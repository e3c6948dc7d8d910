// The provider form: presets fill the type, base URL and endpoints; switching the type moves a
// default base URL and default endpoints to the new type's; a base URL ending in /v1 is noticed.
// Without JavaScript the preset links load the form filled by the server, and saving drops /v1.
(function () {
  var form = document.getElementById("provider-form");
  if (!form) return;
  var urls = JSON.parse(form.getAttribute("data-default-urls") || "{}");
  var endpoints = JSON.parse(form.getAttribute("data-default-endpoints") || "{}");
  var field = function (name) { return form.querySelector('[name="' + name + '"]'); };
  var type = field("type"), base = field("baseUrl");
  var models = field("modelsEndpoint"), inference = field("inferenceEndpoint");
  var note = document.getElementById("v1-note");
  var presetNote = document.getElementById("preset-note");
  var presetUrls = Array.prototype.map.call(
    document.querySelectorAll("a[data-preset]"), function (a) { return a.dataset.baseUrl; });

  function isDefaultUrl(url) {
    url = (url || "").replace(/\/+$/, "");
    return !url || presetUrls.indexOf(url) >= 0 ||
      Object.keys(urls).some(function (t) { return urls[t] === url; });
  }

  function endsInV1() {
    var url = (base.value || "").trim().replace(/\/+$/, "");
    var starts = [models.value || (endpoints[type.value] || [""])[0],
      inference.value || (endpoints[type.value] || ["", ""])[1]];
    var doubled = starts.every(function (e) { return /^\/(v1|api)\//.test(e); });
    return /\/v1$/i.test(url) && doubled;
  }

  function checkV1() { note.hidden = !endsInV1(); }

  type.addEventListener("change", function () {
    var old = type.getAttribute("data-was") || "";
    [models, inference].forEach(function (input, i) {
      if (!input.value || input.value === (endpoints[old] || [])[i]) {
        input.value = (endpoints[type.value] || [])[i] || "";
      }
    });
    if (isDefaultUrl(base.value)) base.value = urls[type.value] || base.value;
    type.setAttribute("data-was", type.value);
    checkV1();
  });
  type.setAttribute("data-was", type.value);

  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a[data-preset]");
    if (!link) return;
    event.preventDefault();
    var d = link.dataset;
    type.value = d.type;
    type.setAttribute("data-was", d.type);
    base.value = d.baseUrl;
    models.value = d.models;
    inference.value = d.inference;
    var name = field("name");
    if (!name.value) name.value = d.name;
    field("maxConcurrency").value = d.concurrency;
    var key = field("headers-0-key");
    if (d.header && key && !key.value) {
      key.value = d.header;
      var secret = field("headers-0-isSecret");
      if (secret) secret.checked = true;
    }
    document.querySelectorAll("a[data-preset]").forEach(function (a) {
      a.classList.toggle("preset--chosen", a === link);
    });
    presetNote.textContent = d.note;
    checkV1();
  });

  base.addEventListener("input", checkV1);
  models.addEventListener("input", checkV1);
  inference.addEventListener("input", checkV1);
  document.getElementById("v1-fix").addEventListener("click", function () {
    base.value = base.value.trim().replace(/\/+$/, "").replace(/\/v1$/i, "");
    checkV1();
    base.focus();
  });
  checkV1();
})();
