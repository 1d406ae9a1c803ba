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
((mnemonic) @keyword.control
  (#match? @keyword.control "^(break|continue|call|return|halt|barrier)$"))
((mnemonic) @function.builtin
  (#match? @function.builtin "^(and|atomic_add|atomic_and|atomic_cas|atomic_compare_swap|atomic_exch|atomic_exchange|atomic_max|atomic_min|atomic_or|atomic_sub|atomic_swap|atomic_xor|badd|badd2|bfe|bfi|bitcount|bitfind|bitop|bitop_bitcount|bitop_bitfind|bitop_bitrev|bitrev|bma|bma2|bmul|bmul2|bsub|cvt_bf16_f32|cvt_f16_f32|cvt_f32_bf16|cvt_f32_f16|cvt_f32_f64|cvt_f32_i32|cvt_f32_u32|cvt_f64_f32|cvt_i32_f32|cvt_u32_f32|dadd|ddiv|device_load|device_load_u128|device_load_u16|device_load_u32|device_load_u64|device_load_u8|device_store|device_store_u128|device_store_u16|device_store_u32|device_store_u64|device_store_u8|dma|dmul|dsqrt|dsub|fabs|fadd|fceil|fclamp|fcmp|fcmp_eq|fcmp_gt|fcmp_le|fcmp_lt|fcmp_ne|fcmp_ord|fcmp_unord|fcos|fdiv|fence|fence_acq_rel|fence_acquire|fence_release|fexp2|ffloor|ffract|flog2|fma|fmax|fmin|fmul|fneg|frcp|fround|fround_ceil|fround_floor|fround_round|fround_trunc|frsqrt|fsat|fsin|fsqrt|fsub|ftransc|ftransc_cos|ftransc_exp2|ftransc_log2|ftransc_sin|ftrunc|hadd|hadd2|hma|hma2|hmul|hmul2|hsub|iabs|iadd|iclamp|icmp|icmp_eq|icmp_ge|icmp_gt|icmp_le|icmp_lt|icmp_ne|idiv|imad|imax|imin|imod|imul|imul_hi|ineg|isub|local_atomic_add|local_atomic_and|local_atomic_cas|local_atomic_compare_swap|local_atomic_exch|local_atomic_exchange|local_atomic_max|local_atomic_min|local_atomic_or|local_atomic_sub|local_atomic_swap|local_atomic_xor|local_load|local_load_u16|local_load_u32|local_load_u64|local_load_u8|local_store|local_store_u16|local_store_u32|local_store_u64|local_store_u8|mma_bf16_f32|mma_f16_f32|mma_f32_f32|mov|mov_imm|mov_special|mov_sr|nop|not|or|sar|select|shift|shift_sar|shift_shl|shift_shr|shl|shr|ucmp|ucmp_le|ucmp_lt|umax|umin|wait|wave_all|wave_any|wave_ballot|wave_broadcast|wave_prefix_sum|wave_reduce|wave_reduce_add|wave_reduce_and|wave_reduce_and_bits|wave_reduce_max|wave_reduce_min|wave_reduce_or|wave_reduce_or_bits|wave_reduce_xor|wave_reduce_xor_bits|wave_shuffle|wave_shuffle_down|wave_shuffle_idx|wave_shuffle_up|wave_shuffle_xor|xor)([.][a-z0-9_]+)*$"))
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
