// errcat: what must happen before Material's own scripts run on a page. Loaded from the head,
// not deferred: Material reads its stored palette as the body starts and requests its word
// index as its bundle starts.
(function () {
  // Material stores the palette it showed on a first visit and shows it again on every later
  // page, so a reader who never chose one stays light after the system turned dark. Until the
  // reader uses the toggle (errcat.js records that), the stored palette is dropped, and the
  // system's scheme decides.
  // On a project's own site (data-palette="site") its pages keep Material's stored palette,
  // and so do errcat's pages there: the reader's choice on one page holds on the next.
  const script = document.currentScript;
  const sitePalette = script instanceof HTMLScriptElement && script.dataset.palette === "site";
  try {
    if (!sitePalette && !__md_get("errcat.scheme-chosen")) __md_set("__palette", null);
  } catch (_) {
    // No storage (a private window): Material then follows the system anyway.
  }

  // Material requests its whole word index (megabytes at torch scale) as each page starts,
  // whether or not the reader searches. That one request waits until the search is first
  // focused or opened, then goes out as Material made it. Pasted errors do not wait on it:
  // errcat's own matcher answers them from search/errcat-match.json.
  // Material asks for it with XMLHttpRequest: its `send` is held back for that one URL.
  const request = window.XMLHttpRequest && XMLHttpRequest.prototype;
  if (!request) return;
  let release;
  const searched = new Promise((resolve) => {
    release = resolve;
  });
  document.addEventListener("focusin", (event) => {
    if (event.target instanceof Element && event.target.closest(".md-search")) release();
  }, true);
  document.addEventListener("change", (event) => {
    if (event.target instanceof Element && event.target.id === "__search") release();
  }, true);
  const open = request.open;
  const send = request.send;
  request.open = function (method, url) {
    const target = new URL(String(url), location.href);
    this.errcatWordIndex = target.origin === location.origin &&
      target.pathname.endsWith("/search/search_index.json");
    return open.apply(this, arguments);
  };
  request.send = function () {
    if (!this.errcatWordIndex) return send.apply(this, arguments);
    const args = arguments;
    searched.then(() => send.apply(this, args));
  };
})();
