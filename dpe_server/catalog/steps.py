"""The page-loading sequence as steps, written once for both readers.

The sequence (know the page count, find a page in the page cache or the store, extract that
page alone where the format allows it, else the whole document, extract again what the store
lost) is a generator that yields what it needs done and receives the result:

- `StoreCall`: a blocking call of the store;
- `PagesJob`: an extraction job for some pages of a document (raises `ExtractionError`);
- `MakeCurrent`: the document's outline made current (the whole document extracted if need be);
- `Probe`: the document's cheap properties (page count) read;
- `Recognise`: a page extraction left `ocr: "pending"` recognised, kept, and served
  (`Index.recognise_steps`: the catalog runs one at a time per page and tells subscribers).

`index.Index.run_steps` performs them: the serving catalog with `await` (store calls in a
thread, jobs in workers, outlines under its locks and retries), the one-shot reader of
`dpe-server read` right away (no event loop: its coroutines never suspend).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from dpe_server.catalog.index import Entry
    from dpe_server.model.tree import Page

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class StoreCall:
    fn: Callable[..., Any]
    args: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class PagesJob:
    entry: Entry
    indices: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class MakeCurrent:
    entry: Entry


@dataclass(frozen=True, slots=True)
class Probe:
    entry: Entry


@dataclass(frozen=True, slots=True)
class Recognise:
    entry: Entry
    key: str
    """The version of the file the page is of."""
    page: Page
    """The page as served while pending."""


Step = StoreCall | PagesJob | MakeCurrent | Probe | Recognise
Steps = Generator[Step, Any, T]
