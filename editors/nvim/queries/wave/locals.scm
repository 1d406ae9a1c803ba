; Scopes, definitions and references (nvim-treesitter capture names).

; A kernel is the scope of its parameters and of its labels.
(kernel) @local.scope

(kernel
  name: (identifier) @local.definition.function)

; `.param a: ptr`
(typed_name
  name: (identifier) @local.definition.parameter)

; `helper:` (call targets are labels)
(label
  name: (identifier) @local.definition.function)

; Uses of a parameter or a label.
(instruction
  operand: (identifier) @local.reference)

(memory_operand
  base: (identifier) @local.reference)
