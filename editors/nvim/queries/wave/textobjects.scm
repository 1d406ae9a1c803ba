; Text objects (nvim-treesitter-textobjects capture names).
;
; The statements of a body are siblings inside the kernel or block node, so
; the inner objects are ranges from the first to the last statement
; (`#make-range!`), anchored to the keyword that closes the body.

; Kernels are the functions of a WAVE file.
(kernel) @function.outer

(kernel
  name: (identifier)
  .
  (_) @_start @_end
  (_)? @_end
  .
  ".end"
  (#make-range! "function.inner" @_start @_end))

; Blocks
[
  (if_block)
  (else_clause)
  (loop_block)
] @block.outer

(if_block) @conditional.outer

(loop_block) @loop.outer

; `if` body without `else`
(if_block
  condition: (_)
  .
  (_) @_start @_end
  (_)? @_end
  .
  "endif"
  (#not-kind-eq? @_end "else_clause")
  (#make-range! "block.inner" @_start @_end))

(if_block
  condition: (_)
  .
  (_) @_start @_end
  (_)? @_end
  .
  "endif"
  (#not-kind-eq? @_end "else_clause")
  (#make-range! "conditional.inner" @_start @_end))

; `if` body before `else`
(if_block
  condition: (_)
  .
  (_) @_start @_end
  (_)? @_end
  .
  (else_clause)
  (#make-range! "block.inner" @_start @_end))

(if_block
  condition: (_)
  .
  (_) @_start @_end
  (_)? @_end
  .
  (else_clause)
  (#make-range! "conditional.inner" @_start @_end))

(else_clause
  "else"
  .
  (_) @_start @_end
  (_)? @_end
  .
  (#make-range! "block.inner" @_start @_end))

(loop_block
  "loop"
  .
  (_) @_start @_end
  (_)? @_end
  .
  "endloop"
  (#make-range! "block.inner" @_start @_end))

(loop_block
  "loop"
  .
  (_) @_start @_end
  (_)? @_end
  .
  "endloop"
  (#make-range! "loop.inner" @_start @_end))

; Statements
[
  (instruction)
  (directive)
] @statement.outer

; Comments
(comment) @comment.outer

; Operands and directive arguments
(instruction
  operand: (_) @parameter.inner)

(directive
  argument: (_) @parameter.inner)

(instruction
  "," @_start
  .
  operand: (_) @_end
  (#make-range! "parameter.outer" @_start @_end))

(directive
  "," @_start
  .
  argument: (_) @_end
  (#make-range! "parameter.outer" @_start @_end))
