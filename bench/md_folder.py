"""markitdown converting a folder in ONE process through its Python API (run with markitdown's
own interpreter): the cheapest way a user can convert many files with it, since one `markitdown`
process per file pays its ~2 s import every time.

    bench/out/venv-markitdown/bin/python bench/md_folder.py DIR
"""

import sys
from pathlib import Path

from markitdown import MarkItDown  # type: ignore[import-not-found]


def main() -> None:
    converter = MarkItDown()
    files = sorted(
        p for p in Path(sys.argv[1]).rglob("*") if p.suffix in (".xlsx", ".pdf", ".pptx", ".docx")
    )
    chars = failed = 0
    for path in files:
        try:
            chars += len(converter.convert(str(path)).text_content)
        except Exception as exc:
            failed += 1
            print(f"{path.name}: {type(exc).__name__}", file=sys.stderr)
    print(f"{len(files)} files, {failed} failed, {chars} chars", file=sys.stderr)


if __name__ == "__main__":
    main()
