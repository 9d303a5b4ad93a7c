"""One extraction job, as a pure function that any backend runs (a thread, a worker process).

`run_job` opens the file through `confine.open_confined` (so what is parsed is what was checked),
sniffs its real type, calls the format's extractor and returns the result as JSON-ready data
(`run_job_here`: as the extractor built it, for a caller in the same process), or the
project's error: it never raises for a bad file. Library exceptions that an extractor
let escape are reported as `corrupt` with the exception's type, never with a traceback.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Literal

from dpe_server.extractors import (
    DEFAULT_LIMITS,
    FORMATS,
    Extractor,
    Limits,
    for_path,
    for_suffix,
    read_as,
    unlocked,
)
from dpe_server.extractors.ocr.words import EngineExhausted
from dpe_server.extractors.passwords import TRY_SECONDS, trying
from dpe_server.isolation.children import child_of, children_of
from dpe_server.isolation.confine import NotConfined, open_confined
from dpe_server.isolation.pictures import picture
from dpe_server.isolation.precheck import precheck
from dpe_server.model import children
from dpe_server.model.errors import (
    CorruptError,
    ExtractionError,
    TooLargeError,
    UnsupportedError,
    extraction_error,
)
from dpe_server.model.tree import JSON, Document, Page, Properties

log = logging.getLogger(__name__)

Op = Literal["probe", "extract", "pages", "ocr", "image", "export", "children"]
"""`children` extracts the documents at `Job.members` inside the job's (a batch: the container
opened once, each child read as `extract` reads a file, its error its own; docs/children.md).
`extract` and `pages` leave the pdf pages, and the pictures of docx, pptx and xlsx pages, to
recognise `pending` (`Limits.ocr_later`): each such page is recognised by an `ocr` job of its own
(its pages, recognised: the formats with pictures extract those pages only), under its own
deadline. `export` is the file exported to PDF by LibreOffice (`Format.pdf_export`), under
`EXPORT_TIMEOUT`: what `dpe-server view` draws an office file's pages from."""

EXPORT_TIMEOUT = 50.0
"""Seconds LibreOffice may take to export a file to PDF (the worker's deadline is 60 s by
default)."""
MAX_FILE_BYTES = 512 * 1024 * 1024
OUT_OF_MEMORY = "The file needs more memory than allowed."


@dataclass(frozen=True, slots=True)
class Job:
    root: str
    rel: str
    op: Op
    pages: tuple[int, ...] = ()
    limits: Limits = DEFAULT_LIMITS
    metadata: Mapping[str, JSON] | None = None
    """For `image`: the image element's metadata, which names its picture."""
    passwords: tuple[str, ...] = field(default=(), repr=False)
    """The passwords given for the file (`isolation.passwords`): sent with the job over the
    worker's pipe, never shown."""
    password_seconds: float = TRY_SECONDS
    """Seconds of tries at most (`extractors.passwords`): a share of the job's deadline."""
    members: tuple[str, ...] = ()
    """For `children`: the paths of the children to extract, in order."""
    budget: float = 20.0
    """For `children`: seconds after which no further child is started (those left are
    not in the result; a share of the job's deadline)."""


def run_job(job: Job) -> dict[str, JSON]:
    """`{"ok": ...}` with the probe, document or pages as JSON, or `{"error": {kind, message}}`."""
    return _guarded(job, lambda: as_json(_run(job)))


def run_job_here(job: Job) -> dict[str, JSON]:
    """`run_job`'s result with the probe, document or pages as the extractor built them
    (`Properties`, `Document`, a list of `Page`), not as JSON: for a caller in this process,
    which has nothing to decode (`client.InlineJobs`; the `decode_` functions take either)."""
    return _guarded(job, lambda: _run(job))


def _guarded(job: Job, work: Callable[[], JSON]) -> dict[str, JSON]:
    try:
        return _outcome(job, work)
    except (MemoryError, EngineExhausted):
        return out_of_memory(job)


def as_json(value: JSON) -> JSON:
    """A job's result (`_run`) as JSON: the trees in it (`Document`, `Page`, `Properties`)
    as their `to_json`, in the lists and dicts that hold them."""
    if isinstance(value, (Document, Page, Properties)):
        return value.to_json()
    if isinstance(value, list):
        return [as_json(v) for v in value]
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    return value


def _outcome(job: Job, work: Callable[[], JSON]) -> dict[str, JSON]:
    """`{"ok": work()}`, or the error it raised as `{"error": ...}` (running out of memory
    excepted: that is the whole job's, which its worker does not survive)."""
    try:
        with trying(job.passwords, job.password_seconds):
            return {"ok": work()}
    except ExtractionError as exc:
        return {"error": {**exc.to_json(), "transient": exc.transient}}
    except NotConfined:
        return {
            "error": {
                "kind": "unsupported",
                "message": "The file is a symbolic link or not a regular file inside the folder; "
                "it is not served.",
                "transient": False,
            }
        }
    except FileNotFoundError:
        return {
            "error": {
                "kind": "corrupt",
                "message": "The file disappeared while it was being read.",
                "transient": True,
            }
        }
    except (MemoryError, EngineExhausted):
        raise
    except (Exception, RecursionError) as exc:  # the boundary: report, never crash the server
        log.debug("extractor raised on %s", job.rel, exc_info=True)
        err = CorruptError(
            f"The file could not be read: the {PurePosixPath(job.rel).suffix} reader failed "
            f"({type(exc).__name__})."
        )
        return {"error": {**err.to_json(), "transient": False}}


def out_of_memory(job: Job) -> dict[str, JSON]:
    """The result of a job that ran out of memory (or the OCR engine, of a resource): bound
    to the worker's memory limit, and `exhausted`, so that its worker is replaced. An `ocr`
    job's is transient: the page stays pending (its picture decoded; what ran out was the
    engine's working memory, which a fresh worker has), never stored as failed."""
    error = TooLargeError(OUT_OF_MEMORY).to_json()
    return {"error": {**error, "transient": job.op == "ocr", "bound": True, "exhausted": True}}


def _run(job: Job) -> JSON:
    file_rel, inner = children.split(job.rel)
    name = inner[-1] if inner else file_rel
    if job.op != "children":
        _extractor_for(name)  # an unread kind is refused before its container is opened
    if "\0" in file_rel or PurePosixPath(file_rel).is_absolute():
        raise NotConfined("not a relative path inside the folder")
    with open_confined(Path(job.root), file_rel) as f:
        size = f.seek(0, 2)
        f.seek(0)
        if size > MAX_FILE_BYTES:
            raise TooLargeError(
                f"The file is {size // (1024 * 1024)} MiB, over the limit of "
                f"{MAX_FILE_BYTES // (1024 * 1024)} MiB."
            )
        f = child_of(f, file_rel, inner, job.limits)  # noqa: PLW2901 (a child: its bytes)
        if job.op == "children":
            return _children(f, name, job)
        return _read(f, name, job)


def _extractor_for(name: str) -> Extractor:
    extractor = for_path(name)
    if extractor is None:
        raise UnsupportedError(f"Files of type {PurePosixPath(name).suffix} are not read.")
    return extractor


def _read(f: BinaryIO, name: str, job: Job) -> JSON:
    """What `job` asks of the file (or child) `f` named `name`: the trees as built
    (`as_json` makes JSON of them)."""
    extractor = _extractor_for(name)
    suffix = read_as(f, name)
    extractor = for_suffix(suffix) or extractor
    f = unlocked(f, suffix)
    precheck(f, suffix, job.limits)
    if job.op == "image":
        found = picture(f, job.rel, job.metadata or {}, Path(job.root))
        if found is None:
            return None
        return {"data": base64.b64encode(found[0]).decode("ascii"), "mime_type": found[1]}
    if job.op == "export":
        return base64.b64encode(exported(f, suffix)).decode("ascii")
    if job.op == "probe":
        props = extractor.probe(f, job.limits)
        inside = embedded(f, suffix, job.limits)
        if inside:  # a document extracted in page chunks lists its children from here
            props = dataclasses.replace(props, extra={**props.extra, "children": inside})
        return props
    limits = dataclasses.replace(job.limits, ocr_later=job.op != "ocr")
    if job.op in ("pages", "ocr") and extractor.extract_pages is not None:
        pages = extractor.extract_pages(f, job.pages, limits)
        return list(_linked(pages, f, suffix, job.limits))
    doc = extractor.extract(f, limits)
    if suffix != PurePosixPath(name).suffix.lower():  # a legacy file under a new suffix
        doc = dataclasses.replace(doc, metadata={**doc.metadata, "read_as": suffix[1:]})
    if job.op in ("pages", "ocr"):
        wanted = [p for p in doc.pages if p.page_index in set(job.pages)]
        return list(_linked(wanted, f, suffix, job.limits))
    inside = embedded(f, suffix, job.limits) if "children" not in doc.metadata else []
    if inside:
        linked = tuple(_with_links(doc.pages, inside))
        doc = dataclasses.replace(doc, pages=linked, metadata={**doc.metadata, "children": inside})
    return doc


def _linked(pages: Sequence[Page], f: BinaryIO, suffix: str, limits: Limits) -> Sequence[Page]:
    """`pages`, the first page of the document among them with a link to each document
    embedded in it that its format lists apart (`embedded`)."""
    if not any(p.page_index == 0 for p in pages):
        return pages
    return _with_links(pages, embedded(f, suffix, limits))


def _with_links(pages: Sequence[Page], inside: Sequence[JSON]) -> list[Page]:
    """The first page's links to the embedded documents follow its elements."""
    listed = [c for c in inside if isinstance(c, dict)]
    return [children.with_links(p, listed) if p.page_index == 0 else p for p in pages]


def _children(f: BinaryIO, name: str, job: Job) -> JSON:
    """The documents at `job.members` inside `f` (named `name`), each extracted as a file is,
    its error its own: `[{"path", "ok"} or {"path", "error"}]`, in order, stopping before a
    child once `job.budget` seconds have passed (one is always read)."""
    start = time.monotonic()
    done: list[JSON] = []
    for path, data in children_of(f, name, job.members, job.limits):
        if done and time.monotonic() - start > job.budget:
            break
        one = dataclasses.replace(job, rel=children.child_rel(job.rel, path), op="extract")
        done.append({"path": path, **_outcome(one, functools.partial(_child, data, path, one))})
    return done


def _child(data: Callable[[], BinaryIO], path: str, job: Job) -> JSON:
    _extractor_for(path)  # an unread kind is refused before it is read
    return _read(data(), path, job)


def embedded(f: BinaryIO, suffix: str, limits: Limits) -> list[JSON]:
    """The documents embedded in `f` its format lists (`Format.embedded`; docs/children.md);
    none when it cannot list them: the file itself is read all the same."""
    fmt = FORMATS.get(suffix)
    if fmt is None or fmt.embedded is None:
        return []
    try:
        return fmt.embedded(f, limits)
    except ExtractionError:
        log.debug("the documents embedded in a %s file not listed", suffix, exc_info=True)
        return []
    finally:
        f.seek(0)


def exported(f: BinaryIO, suffix: str) -> bytes:
    """The file (checked, decrypted) exported to PDF by LibreOffice, as its format's pages
    are (`kit.soffice.PDF_EXPORTS`)."""
    from dpe_server.extractors.kit.soffice import export_pdf  # its sandbox loads ctypes

    fmt = FORMATS.get(suffix)
    if fmt is None or not fmt.pdf_export:
        raise UnsupportedError(f"LibreOffice does not draw the pages of {suffix} files here.")
    f.seek(0)
    return export_pdf(f.read(), suffix, fmt.page_unit, EXPORT_TIMEOUT)


def decode_probe(data: JSON) -> Properties:
    return data if isinstance(data, Properties) else Properties.from_json(data)


def decode_document(data: JSON) -> Document:
    return data if isinstance(data, Document) else Document.from_json(data)


def decode_image(data: JSON) -> tuple[str, str] | None:
    return None if data is None else (str(data["data"]), str(data["mime_type"]))


def decode_export(data: JSON) -> str:
    return str(data)


def decode_pages(data: JSON) -> list[Page]:
    return [p if isinstance(p, Page) else Page.from_json(p) for p in data]


def decode_children(data: JSON) -> list[tuple[str, Document | ExtractionError]]:
    """A `children` job's results: each child's document, or its error."""
    out: list[tuple[str, Document | ExtractionError]] = []
    for one in data:
        path = str(one["path"])
        error = one.get("error")
        out.append((path, decode_error(error) if error else decode_document(one["ok"])))
    return out


def decode_error(data: JSON) -> ExtractionError:
    err = extraction_error(str(data.get("kind")), str(data.get("message")))
    err.transient = bool(data.get("transient"))
    err.bound = bool(data.get("bound"))
    return err


def unwrap(result: dict[str, JSON]) -> JSON:
    """The `ok` value of a job result, or its error raised."""
    if "error" in result:
        raise decode_error(result["error"])
    return result["ok"]


def pages_arg(indices: Sequence[int]) -> tuple[int, ...]:
    return tuple(sorted(set(indices)))
