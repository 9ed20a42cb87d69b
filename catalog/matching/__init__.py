"""Which entry a raise site or a message belongs to.

`sites` matches scanned raise sites to entries (what `check`, `new` and the pages rely on);
`messages` matches a pasted error text to entries (`explain`, `/api/match`); `message_index`
caches the compiled message index between runs; `browser_index` writes the same rules' index
for the site's search box, so that the three routes agree."""
