"""The catalog and its store: the serving process's state.

- `folder`: which files of the folder count, their doc_refs, their versions (stat and content);
- `store`: the `Store` protocol (outlines, pages, probes, errors per version) and its memory form;
- `sqlite`: the persistent store, one SQLite file per folder in the user's cache, with its
  full-text index (`fulltext`: SQLite FTS5, written; `textquery`: searched, with `ranking`:
  BM25 of a window of matches, computed here for common words), the connections searches run
  on (`searchers`, never the one the cache writes through) and the removal of cache files no
  server will open again (`cachefiles`);
- `postgres`: the store shared by several replicas over one folder, with their work queue and
  change feed (`shared`: what such a store adds), its tables (`pgschema`: created and
  migrated by the server), its full-text index (`pgtext`: `tsvector` and `tsquery`, the same
  words as SQLite) and its connections (`pglink`: never waiting on the database for long);
  `stores`: which store `--store URL` names;
- `index`: what is known of every document, shared by both readers (no event loop), the
  documents inside documents among them (`children`: what a container's tree lists of them,
  their stat, its links pointed at them; docs/children.md);
- `catalog`: the serving side, `Catalog`, its concerns stacked in modules of their own:
  `announce` (the changes told to whoever listens), `recognition` (pages left to recognise,
  and their queue, `recent`: most recently modified first, each once), `extraction` (start-up
  listing, warm-up, extraction on demand, retries), `freshness` (rescans, changed files read
  again, one announcement a rescan); `claims`: the jobs claimed and leased with a shared store;
- `steps`: the page-loading sequence both readers perform;
- `watcher`: file system events turned into catalog rescans.
"""
