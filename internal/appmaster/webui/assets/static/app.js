// Refreshes the page in place: fetches it again (relative URL: YARN's web
// proxy serves it under /proxy/<app>/) and swaps the live part, until the
// job is final.
(function () {
  "use strict";
  var every = 3000;
  var refreshes = 0;
  function refresh() {
    var live = document.getElementById("live");
    if (!live || live.getAttribute("data-final") === "true") return;
    fetch(window.location.href, { cache: "no-store", credentials: "same-origin" })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
      .then(function (text) {
        var next = new DOMParser().parseFromString(text, "text/html").getElementById("live");
        if (!next) return;
        refreshes++;
        next.setAttribute("data-refreshes", String(refreshes)); // how many times, for people and tests
        live.replaceWith(next);
      })
      .catch(function () { /* the AM may be gone: keep the last page */ })
      .finally(function () { setTimeout(refresh, every); });
  }
  setTimeout(refresh, every);
})();
