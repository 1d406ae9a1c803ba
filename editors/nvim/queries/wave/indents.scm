; Indentation (nvim-treesitter capture names). By convention the body of a
; kernel and of each block is indented one level; closing keywords and `else`
; line up with the line that opened the block.

[
  (kernel)
  (if_block)
  (else_clause)
  (loop_block)
] @indent.begin

[
  ".end"
  "endif"
  "endloop"
] @indent.end

[
  ".end"
  "endif"
  "endloop"
  "else"
] @indent.branch

(comment) @indent.auto

(ERROR) @indent.auto
