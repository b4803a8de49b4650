"""The menu of `select`, laid out as bash lays it out."""
from __future__ import annotations


def select_menu(items: list, columns) -> str:
    """The menu of `select` laid out in columns as bash's print_select_list does ($COLUMNS
    wide, 80 by default; the gaps filled with tabs to 8-column stops, then blanks)."""
    count = len(items)
    index_width = len(str(count))
    cell = max(len(item) for item in items) + index_width + 4     # ") " and two blanks
    width = int(columns) if columns and columns.isdigit() and int(columns) > 0 else 80
    cols = max(width // cell, 1)
    rows = count // cols + (count % cols != 0)
    cols = count // rows + (count % rows != 0)
    if rows == 1:
        rows, cols = cols, 1
    first_width = len(str(rows))
    out: list = []
    for row in range(rows):
        index, pos = row, 0
        while True:
            text = f"{index + 1:{first_width if pos == 0 else index_width}d}) {items[index]}"
            out.append(text)
            index += rows
            if index >= count:
                break
            start, end = pos + len(text), pos + cell
            while end // 8 > start // 8:
                out.append("\t")
                start += 8 - start % 8
            out.append(" " * (end - start))
            pos += cell
        out.append("\n")
    return "".join(out)
