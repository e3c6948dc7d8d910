// The Content-Security-Policy allows no inline style and no eval: htmx must inject neither (its
// indicator styles are in app.css). Set before DOMContentLoaded, when htmx reads its config.
if (window.htmx) {
  htmx.config.includeIndicatorStyles = false;
  htmx.config.allowEval = false;
}
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
// "Go back" links (data-back): the browser's history when there is one, else the link itself.
// No javascript: URL and no inline handler, so the Content-Security-Policy needs no exception.
document.addEventListener("click", function (event) {
  var link = event.target.closest && event.target.closest("a[data-back]");
  if (link && window.history.length > 1) {
    event.preventDefault();
    window.history.back();
  }
});
// Selects that submit their form when changed (data-autosubmit): no inline handler for the CSP.
document.addEventListener("change", function (event) {
  var el = event.target;
  if (el.hasAttribute && el.hasAttribute("data-autosubmit") && el.form) el.form.requestSubmit();
});
// A select whose chosen option's whole text is shown below it (data-chosen: that element's id),
// since a closed select cuts a long name.
document.addEventListener("change", function (event) {
  var el = event.target;
  var out = el.getAttribute && el.getAttribute("data-chosen") && document.getElementById(el.getAttribute("data-chosen"));
  if (out) out.textContent = el.value ? el.options[el.selectedIndex].text : "";
});
// A table that scrolls sideways in its box can be scrolled from the keyboard too (tabindex).
function markScrollingTables() {
  document.querySelectorAll(".table-wrap").forEach(function (wrap) {
    if (wrap.scrollWidth > wrap.clientWidth + 1) {
      wrap.setAttribute("tabindex", "0");
      if (!wrap.hasAttribute("role")) wrap.setAttribute("role", "region");
      var caption = wrap.querySelector("caption");
      if (!wrap.hasAttribute("aria-label")) {
        wrap.setAttribute("aria-label", caption ? caption.textContent.trim() : "table, scrolls sideways");
      }
    } else if (wrap.getAttribute("tabindex") === "0") {
      wrap.removeAttribute("tabindex");
    }
  });
}
document.addEventListener("DOMContentLoaded", markScrollingTables);
window.addEventListener("resize", markScrollingTables);
document.addEventListener("htmx:afterSettle", markScrollingTables);
