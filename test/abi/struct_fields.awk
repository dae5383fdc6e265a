# struct_fields.awk - list every member of every tagged struct in a header written in this
# project's style (src/qnn/qnn_abi.h), one "tag member.path" line each, nested union/struct
# members included ("qnn_tensor_v1 u.client_buf"), and a line with the bare tag for the struct
# itself (its size/alignment must be checked too). Comments and preprocessor lines are ignored.
# Used by gen_abi_tables.sh so that check_abi can prove it checks every declared member.
{ buf = buf "\n" $0 }
END {
  gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, " ", buf)
  n = split(buf, lines, "\n"); s = ""
  for (i = 1; i <= n; i++) { l = lines[i]; sub(/\/\/.*/, "", l); if (l ~ /^[ \t]*#/) continue; s = s " " l }
  depth = 0; tag = ""; closing = 0
  while (match(s, /[{};]/)) {
    text = substr(s, 1, RSTART - 1); ch = substr(s, RSTART, 1); s = substr(s, RSTART + 1)
    gsub(/^[ \t]+|[ \t]+$/, "", text)
    if (ch == "{") {
      if (depth == 0) {
        tag = ""
        if (match(text, /struct[ \t]+[A-Za-z_0-9]+$/)) { tag = substr(text, RSTART + 6); gsub(/[ \t]/, "", tag) }
        if (tag == "") { skipping = 1; continue }     # extern "C" { and the like
      }
      depth++; cnt[depth] = 0; closing = 0
      continue
    }
    if (ch == "}") {
      if (depth == 0) { continue }
      depth--; closing = 1
      if (depth == 0) { print tag; for (k = 1; k <= cnt[1]; k++) print tag, m[1, k]; tag = "" }
      continue
    }
    # ch == ';'
    if (closing) {
      closing = 0
      if (depth == 0) continue                          # typedef name
      name = text; gsub(/[^A-Za-z_0-9]/, "", name)
      m[depth, ++cnt[depth]] = name
      for (k = 1; k <= cnt[depth + 1]; k++) m[depth, ++cnt[depth]] = name "." m[depth + 1, k]
      continue
    }
    if (depth == 0 || text == "") continue
    if (index(text, "(*")) { name = text; sub(/^[^(]*\(\*[ \t]*/, "", name); sub(/[^A-Za-z_0-9].*$/, "", name) }
    else { name = text; sub(/\[[^]]*\]$/, "", name); sub(/^.*[^A-Za-z_0-9]/, "", name) }
    m[depth, ++cnt[depth]] = name
  }
}
