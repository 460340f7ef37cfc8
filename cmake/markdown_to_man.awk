# A Markdown page of docs/ as a man page: the subset the pages use (headings, paragraphs, bullet
# lists, code blocks, tables, `code`, **bold**, [links](...)). POSIX awk (Debian's mawk).
#   awk -v name=tusk-profile -v section=5 -v title="..." -v version=0.1.0 -f markdown_to_man.awk PAGE.md
# The page's own "# Title" line gives way to NAME, what follows it is the DESCRIPTION; each "## Heading" is a section, deeper headings
# are subsections. A table becomes one tagged paragraph per row: the first cell as the tag, each
# other cell under its column's heading.

function escape(text) {
  gsub(/\\/, "\\e", text)
  return text
}

# Inline Markdown to roff fonts (`code` and **bold** bold, *emphasis* italic); links keep their text.
function inline(text,    out, start, len) {
  text = escape(text)
  out = ""
  while (match(text, /`[^`]*`/)) {
    out = out substr(text, 1, RSTART - 1) "\\fB" substr(text, RSTART + 1, RLENGTH - 2) "\\fR"
    text = substr(text, RSTART + RLENGTH)
  }
  text = out text
  out = ""
  while (match(text, /\*\*[^*]+\*\*/)) {
    out = out substr(text, 1, RSTART - 1) "\\fB" substr(text, RSTART + 2, RLENGTH - 4) "\\fR"
    text = substr(text, RSTART + RLENGTH)
  }
  text = out text
  out = ""
  while (match(text, /(^|[ (])\*[^* ][^*]*\*/)) {
    len = index(substr(text, RSTART), "*")
    out = out substr(text, 1, RSTART + len - 2) "\\fI" substr(text, RSTART + len, RLENGTH - len - 1) "\\fR"
    text = substr(text, RSTART + RLENGTH)
  }
  text = out text
  out = ""
  while (match(text, /\[[^]]*\]\([^)]*\)/)) {
    len = index(substr(text, RSTART), "](")
    out = out substr(text, 1, RSTART - 1) substr(text, RSTART + 1, len - 2)
    text = substr(text, RSTART + RLENGTH)
  }
  return out text
}

# A line roff would read as a request if it began with '.' or '\''.
function line_out(text) {
  if (text ~ /^[.']/) text = "\\&" text
  print text
}

# The cells of a table row, trimmed, into cells[1..n]; returns n. A '|' inside `code` stays.
function split_row(row, cells,    n, i, c, cell, code) {
  sub(/^[ \t]*\|/, "", row)
  sub(/\|[ \t]*$/, "", row)
  n = 0
  cell = ""
  code = 0
  for (i = 1; i <= length(row); i++) {
    c = substr(row, i, 1)
    if (c == "`") code = !code
    if (c == "|" && !code && substr(row, i - 1, 1) != "\\") {
      cells[++n] = cell
      cell = ""
      continue
    }
    cell = cell c
  }
  cells[++n] = cell
  for (i = 1; i <= n; i++) {
    gsub(/^[ \t]+|[ \t]+$/, "", cells[i])
    gsub(/\\\|/, "|", cells[i])
  }
  return n
}

# A paragraph break, unless one (or a heading) was the last thing out.
function paragraph() {
  if (!broken) print ".PP"
  broken = 1
}

# The paragraph or list item read so far, joined, so that `code` may span lines.
function flush() {
  if (text == "") return
  line_out(inline(text))
  text = ""
  broken = 0
}

function end_table() {
  table = 0
  columns = 0
}

BEGIN {
  printf ".TH %s %s \"\" \"Tusk %s\" \"Tusk manual\"\n", toupper(name), section, version
  print ".SH NAME"
  printf "%s \\- %s\n", name, title
  print ".SH DESCRIPTION"
  fence = 0
  table = 0
  broken = 1
}

/^```/ {
  flush()
  if (fence) { print ".fi"; print ".RE"; fence = 0; broken = 0 } else { paragraph(); print ".RS 2"; print ".nf"; fence = 1 }
  next
}
fence { line_out(escape($0)); next }

/^\|/ {
  flush()
  if (!table) {
    columns = split_row($0, heading)
    table = 1
    next
  }
  if ($0 ~ /^\|[ \t:|-]+\|?[ \t]*$/) next  # the header's underline
  n = split_row($0, cells)
  print ".TP"
  broken = 0
  line_out(inline(cells[1]))
  first = 1
  for (i = 2; i <= n && i <= columns; i++) {
    if (cells[i] == "") continue
    if (!first) print ".br"
    line_out(inline(heading[i]) ": " inline(cells[i]))
    first = 0
  }
  next
}
table { end_table() }

/^# / { next }
/^## / { flush(); sub(/^## +/, ""); print ".SH " toupper(inline($0)); broken = 1; next }
/^###+ / { flush(); sub(/^#+ +/, ""); print ".SS " inline($0); broken = 1; next }
/^[ \t]*$/ { flush(); paragraph(); next }
/^[-*] / { flush(); sub(/^[-*] +/, ""); print ".IP \\(bu 2"; text = $0; next }
{ sub(/^[ \t]+/, ""); text = text == "" ? $0 : text " " $0 }
END { flush() }
