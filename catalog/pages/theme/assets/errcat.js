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
