[
  (kernel)
  (if_block)
  (else_clause)
  (loop_block)
] @fold
