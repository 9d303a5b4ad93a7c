"""Parsing untrusted files out of the serving process.

- `confine`: open a file only inside the folder, no symlink on the way, the checked descriptor;
- `precheck`: magic bytes and container checks before any extractor runs;
- `passwords`: the passwords file (`--passwords FILE`): which passwords to try on which files;
- `jobs`: one extraction job (probe, extract, pages, picture) as a pure function;
- `children`: a document inside another read from its container, in memory (docs/children.md);
- `pictures`: the bytes of an image element's picture, through its format;
- `client`: the one client of extraction jobs (`JobClient`): a job built, run and decoded,
  any failure turned into the document's `ExtractionError`;
- `backends`: the `Backend` protocol the catalog talks to, and jobs in threads (tests);
- `workers`: jobs in a pool of child processes with a deadline and a memory limit;
- `guard`: the same limits on this process, for `dpe-server read` of one document.
"""
