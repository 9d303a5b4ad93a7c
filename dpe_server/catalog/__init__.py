"""The catalog and its store: the serving process's state.

- `folder`: which files of the folder count, their doc_refs, their versions (stat and content);
- `store`: the `Store` protocol (outlines, pages, probes, errors per version) and its memory form;
- `sqlite`: the persistent store, one SQLite file per folder in the user's cache;
- `postgres`: the store shared by several replicas over one folder, with their work queue and
  change feed (`shared`: what such a store adds); `stores`: which store `--store URL` names;
- `index`: what is known of every document, shared by both readers (no event loop);
- `catalog`: the serving side, `Catalog`, its concerns stacked in modules of their own:
  `announce` (the changes told to whoever listens), `recognition` (pages left to recognise,
  and their queue), `extraction` (start-up listing, warm-up, extraction on demand, retries),
  `freshness` (rescans, changed files read again, one announcement a rescan); `claims`: the
  jobs claimed and leased with a shared store;
- `steps`: the page-loading sequence both readers perform;
- `watcher`: file system events turned into catalog rescans.
"""
