// The "Paste an error message" buttons (home page, 404 page) open Material's search with the
// box focused, ready for a paste. Material opens its search when the `__search` checkbox turns
// on (the header's search icon is a label for it) and shows the box only then on a phone, so the
// box can take the focus only once the checkbox is on.
document.addEventListener("click", (event) => {
  const button = event.target.closest("[data-errcat-search]");
  if (!button) return;
  event.preventDefault();
  const toggle = document.getElementById("__search");
  const box = document.querySelector("input.md-search__input");
  if (!toggle || !box) return;
  if (!toggle.checked) {
    toggle.checked = true;
    toggle.dispatchEvent(new Event("change"));
  }
  box.focus();
});

// The reader chose a scheme with the header toggle: from now on Material's stored palette holds
// (errcat_main.html drops it on each page until then, so the system's scheme is followed).
// Material itself also switches the inputs when the system's scheme changes; only a reader's
// own click (a trusted event) counts as a choice.
document.addEventListener("click", (event) => {
  if (!event.isTrusted || typeof __md_set !== "function") return;
  if (event.target.closest('label[for^="__palette"], input[name="__palette"]')) {
    __md_set("errcat.scheme-chosen", true);
  }
});

// Long identifiers, paths and placeholders break only after `/`, `.` or `_`. Browsers break
// code anywhere (`functional_adamax.p|y:38`) or not at all, and one long token widened a whole
// index table past its column. Names that fit keep the look they have: only a token of
// `LONG` characters or more gets break opportunities (<wbr>) and may wrap.
const LONG = 28;
const LONG_TOKEN = new RegExp(`(\\S{${LONG},})`);
function errcatWrapElement(spot) {
  if (spot.dataset.errcatWrapped) return;
  spot.dataset.errcatWrapped = "1";
  const walker = document.createTreeWalker(spot, NodeFilter.SHOW_TEXT);
  const texts = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) texts.push(node);
  for (const node of texts) {
    if (!LONG_TOKEN.test(node.data)) continue;
    const pieces = [];
    for (const part of node.data.split(LONG_TOKEN)) {
      if (part.length < LONG || /\s/.test(part)) {
        if (part) pieces.push(document.createTextNode(part));
        continue;
      }
      for (const bit of part.split(/(?<=[/._])/)) {
        pieces.push(document.createTextNode(bit), document.createElement("wbr"));
      }
      pieces.pop();
    }
    node.replaceWith(...pieces);
    spot.classList.add("errcat-long");
  }
}
function errcatWrap(root) {
  const spots = root.querySelectorAll(
    ".errcat-index td code, .errcat-index td a, .errcat-source code:not(pre code), " +
    ".errcat-derived p code, .errcat-path code, .md-typeset h1 code");
  for (const spot of spots) errcatWrapElement(spot);
}
/* A link from a pasted traceback names its raise site by path and line (#at-<path>-<line>,
   catalog/matching/frames.py). When the installed package is another version than the one
   the site was built from, the line may have moved: go to the nearest site in the same file. */
function errcatNearestSite() {
  const wanted = /^#(at-.+)-(\d+)$/.exec(decodeURIComponent(location.hash));
  if (!wanted || document.getElementById(wanted[1] + "-" + wanted[2])) return;
  let best = null;
  let distance = Infinity;
  for (const spot of document.querySelectorAll(".errcat-at")) {
    const site = /^(at-.+)-(\d+)$/.exec(spot.id);
    if (!site || site[1] !== wanted[1]) continue;
    const away = Math.abs(Number(site[2]) - Number(wanted[2]));
    if (away < distance) [best, distance] = [spot, away];
  }
  if (best) best.scrollIntoView();
}
window.errcatWrapElement = errcatWrapElement;
window.errcatWrap = errcatWrap;
if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", () => { errcatWrap(document); errcatNearestSite(); });
} else {
  errcatWrap(document);
  errcatNearestSite();
}
