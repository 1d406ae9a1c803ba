; Syntax highlighting for WAVE assembly (nvim-treesitter capture names).
;
; Where two patterns could capture the same node, they are written so that
; they exclude each other: tree-sitter's own highlighter lets the first
; pattern win, Neovim lets the last one win.

; Comments
(comment) @comment

; Kernels and directives
[
  ".kernel"
  ".end"
] @keyword.directive

(directive_name) @keyword.directive

(kernel
  name: (identifier) @function)

(typed_name
  name: (identifier) @variable.parameter
  type: (identifier) @type.builtin)

(directive
  argument: (identifier) @variable)

; Structured control flow
[
  "if"
  "else"
  "endif"
] @keyword.conditional

[
  "loop"
  "endloop"
] @keyword.repeat

; Labels
(label
  name: (identifier) @label)

; A `call` target is a label; other identifier operands name parameters.
; The instruction's text is tested (rather than its mnemonic node) so that
; the mnemonic keeps its own capture in every highlighter; these patterns
; come before the mnemonic patterns so that tree-sitter's highlighter opens
; the (wider) instruction capture first. The regular expression is written
; to mean the same in Rust's regex and in Vim's very-magic syntax (Neovim).
((instruction
  operand: (identifier) @label) @_instruction
  (#match? @_instruction "^([@][ \t]*[!]?[ \t]*[pP][0-9]+[ \t]+)?call[ \t]"))

((instruction
  operand: (identifier) @variable) @_instruction
  (#not-match? @_instruction "^([@][ \t]*[!]?[ \t]*[pP][0-9]+[ \t]+)?call[ \t]"))

; Mnemonics. Mnemonics that are not listed stay unhighlighted on purpose, so
; that a typo shows. The block between the markers is rewritten by the code
; generator from the ISA table; do not edit it by hand.
; BEGIN GENERATED MNEMONICS
((mnemonic) @function.builtin (#any-of? @function.builtin "iadd" "fadd" "halt"))
((mnemonic) @keyword.control (#any-of? @keyword.control "break" "continue" "call" "return" "halt" "barrier"))
; END GENERATED MNEMONICS

; Operands
(register) @variable

(predicate) @variable

(special_register) @variable.builtin

(scope_operand) @keyword.modifier

(memory_operand
  base: (identifier) @variable)

; Literals
(integer) @number

(float) @number.float

; Punctuation and operators
[
  ","
  ":"
] @punctuation.delimiter

[
  "["
  "]"
] @punctuation.bracket

"@" @punctuation.special

[
  "!"
  "+"
  "-"
] @operator
