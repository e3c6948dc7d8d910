// Send the CSRF token with every htmx request; forms also carry it as a hidden field.
document.addEventListener("htmx:configRequest", function (event) {
  var meta = document.querySelector('meta[name="csrf-token"]');
  if (meta) event.detail.headers["X-CSRFToken"] = meta.content;
});
// Confirm destructive actions that declare data-confirm (works for plain form posts too).
document.addEventListener("submit", function (event) {
  var msg = event.target.getAttribute("data-confirm");
  if (msg && !window.confirm(msg)) event.preventDefault();
}, true);
