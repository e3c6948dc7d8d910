// Live run view: show "Reconnecting…" while the server does not answer the poll; hide it again
// as soon as a request succeeds. htmx keeps polling through errors, so nothing else is needed.
(function () {
  function indicator() { return document.getElementById("reconnecting"); }
  function offline(on) {
    var el = indicator();
    if (el) el.hidden = !on;
    document.body.classList.toggle("is-offline", on);
  }
  document.addEventListener("htmx:sendError", function () { offline(true); });
  document.addEventListener("htmx:responseError", function (event) {
    // 5xx (or no status) means the server is in trouble; a 4xx is an answer, not a lost connection.
    var status = event.detail.xhr ? event.detail.xhr.status : 0;
    if (!status || status >= 500) offline(true);
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail.successful) offline(false);
  });
})();
