"""Freshness: the catalog kept as the folder is, and every change announced.

The watcher (`watcher`), and the other replicas sharing the store (`follow`), say which paths
changed; `rescan` compares them (or the whole folder) with the catalog. A changed file is
probed and re-extracted in the background while the last good outline and pages keep being
served; once every file a rescan found changed is read again, they are announced in one change
(with the list's, when files came or went): one announcement a rescan, not one a file, as each
is matched against every subscription of every session. New files are probed, then, while
the warm-up runs, extracted before the list's change is announced: a new file is told once,
with its title, not once listed and again titled.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Collection, Sequence

import anyio
import anyio.to_thread

from dpe_server.catalog.announce import Change, listing
from dpe_server.catalog.extraction import Entry, Extraction, fresh
from dpe_server.catalog.folder import FileStat, scan, scan_paths
from dpe_server.model import children

log = logging.getLogger(__name__)


def may_have_changed(known: FileStat, st: FileStat) -> bool:
    """Whether a file known as `known` may be another version now that it is `st`: its stat
    moved, or its times are coarse and recent, so a rewrite within the same tick as the last
    may have left them all as they were (its content fingerprint then tells)."""
    return st != known or (st.coarse and fresh(st))


class Freshness(Extraction):
    """An extracted index that follows the folder's changes and announces them."""

    async def rescan(self, paths: Collection[str] | None = None, *, publish: bool = True) -> Change:
        """Compare the folder with the catalog; update it; return what changed, and announce it
        in one change: at once when files only went (or came, probed, with no warm-up), once
        the warm-up has read them when files came, else once every changed file is read again
        (in the background when the catalog has a task group); `publish` it to the
        other replicas too (a shared store) unless they told us.

        `paths` (relative, POSIX): compare only these paths and what is below them (what a
        watcher or another replica says changed); None compares the whole folder.
        """
        if paths is None:
            found = scan(self.root)
            known: Collection[str] = [rel for rel in self._entries if not children.depth(rel)]
        else:
            found, subtrees = await anyio.to_thread.run_sync(scan_paths, self.root, paths)
            known = {rel for rel in paths if rel in self._entries}
            below = tuple(f"{rel}/" for rel in subtrees if rel not in self._entries)
            if below:
                known |= {rel for rel in self._entries if rel.startswith(below)}
        added = [rel for rel in found if rel not in self._entries]
        removed = [rel for rel in known if rel not in found]
        keys = {
            rel: self._key(rel, st)
            for rel, st in found.items()
            if rel in self._entries and may_have_changed(self._entries[rel].stat, st)
        }
        changed = [rel for rel, key in keys.items() if key != self._entries[rel].key]
        for rel in removed:
            self._drop(self._entries[rel])
        new_entries = [self._add(rel, found[rel]) for rel in added]
        async with anyio.create_task_group() as tg:
            for entry in new_entries:
                if not self._restore(entry):
                    tg.start_soon(self._probe, entry)
        # New files the warm-up extracts are announced once read, titled: one list_changed
        # for them, not one when probed and another when their title came from the content.
        unread = [e for e in new_entries if not (e.current or e.failed)]
        unread = unread if self._warming and self._tg is not None else []
        refreshed = [self._entries[rel] for rel in changed]
        for entry in refreshed:
            entry.stat, entry.key = found[entry.rel], keys[entry.rel]
        listed = bool(added or removed)
        told = listed and not unread  # else told by the warm-up of the unread ones
        if refreshed and self._tg is not None:
            self._in_background(functools.partial(self._refresh_all, refreshed, told))
        elif refreshed:
            await self._refresh_all(refreshed, told)
        elif told:
            await self._announce(Change(list_changed=True))
        if unread:
            self._in_background(functools.partial(self._warm, unread, list_changed=listed))
        if publish and self.shared is not None and (added or removed or changed):
            await anyio.to_thread.run_sync(self.shared.publish, [*added, *removed, *changed])
        return Change(listed, frozenset(e.doc_ref for e in refreshed))

    async def follow(self) -> None:
        """Rescan whenever another replica sharing the store saw a change, until cancelled
        (a replica that does not watch the folder still tells its sessions)."""
        if self.shared is None:
            return

        async def changed(rels: list[str] | None) -> None:
            try:
                await self.rescan(rels, publish=False)
            except Exception:
                log.exception("rescan of %s failed; will retry on the next change", self.root)

        await self.shared.follow(changed)

    async def _refresh_all(self, entries: Sequence[Entry], list_changed: bool) -> None:
        """Re-read the files a rescan found changed, all at once, then announce them in one
        change, with the list's when it changed (the last good versions are served meanwhile).
        One announcement, not one a file: each has every subscription matched against it."""
        updated: set[str] = set()

        async def one(entry: Entry) -> None:
            nonlocal list_changed
            kids = self.child_keys(entry)
            try:
                listed = await self._refresh_changed(entry)
            except Exception:  # a failure of ours costs this file, not the others' news
                log.exception(
                    "background work of the catalog failed (re-reading %s); serving goes on",
                    entry.rel,
                )
                return
            if listed is not None:
                updated.add(entry.doc_ref)
                now = self.child_keys(entry)  # its children: new versions, or came or went
                moved = [r for r, key in now.items() if kids.get(r, key) != key]
                updated.update(self._entries[r].doc_ref for r in moved)
                list_changed |= listed or now.keys() != kids.keys()
                if self._warming:  # their new versions read before they are announced
                    await self._warm([self._entries[r] for r in now if r not in kids or r in moved])

        async with anyio.create_task_group() as tg:
            for entry in entries:
                tg.start_soon(one, entry)
        if updated or list_changed:
            await self._announce(Change(list_changed, frozenset(updated)))

    async def _refresh_changed(self, entry: Entry) -> bool | None:
        """Re-read a changed file: whether what the list shows of it changed; None when it
        changed again meanwhile (the rescan that saw that announces it)."""
        key = entry.key
        before = listing(self.info_of(entry))
        async with entry.held():
            if key != entry.key:
                return None
            if not self._restore(entry):
                await self._probe(entry)
                if entry.error is None and entry.outline is not None:
                    await self._extract_locked(entry)
                elif entry.failed:
                    entry.outline, entry.outline_key = None, ""
            elif self.shared and entry.error is None and entry.outline and not entry.current:
                # Only another replica's probe of this version: it is extracting it. Wait for
                # its result (or take the job over), so that the new version is announced.
                await self._extract_locked(entry)
        if key != entry.key:
            return None
        if not (entry.current or entry.failed or entry.error is not None):
            self._warm_later([entry])  # repaired, or only probed so far: extract it
        return listing(self.info_of(entry)) != before
