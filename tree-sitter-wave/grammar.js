/**
 * @file Tree-sitter grammar for WAVE GPU assembly (`.wave`).
 *
 * The node names and fields below are a contract: the assembler, the
 * language server and the editor queries walk them. See
 * docs/spec (assembly.md, "the text contract") of the project.
 *
 * Newlines are significant (one statement per line); spaces, tabs and
 * comments (`;`, `#`, `//` to end of line) are extras.
 */

/// <reference types="tree-sitter-cli/dsl" />
// @ts-check

/**
 * A comma-separated list of one or more `rule`.
 *
 * @param {RuleOrLiteral} rule
 */
function commaSep1(rule) {
  return seq(rule, repeat(seq(',', rule)));
}

/**
 * Zero or more statements, each on its own line, with blank lines anywhere.
 * Used for the bodies of kernels and blocks (a hidden named rule may not
 * match the empty string, so this is inlined).
 *
 * The last statement of a body may be followed by its closing keyword on the
 * same line (`halt endif`). Canonical text never does that (the assembler may
 * warn: the closer then sits on the row of the last statement); the grammar
 * allows it so that error recovery can repair a forgotten closer with a
 * single MISSING token: `if p0 / halt / .end` parses as an `if_block` whose
 * `endif` is MISSING, right before `.end`, instead of an ERROR that swallows
 * the block.
 *
 * @param {GrammarSymbols<string>} $
 */
function body($) {
  return seq(
    repeat(choice(seq($._statement, $._newline), $._newline)),
    optional($._statement),
  );
}

/**
 * `[@pN | @!pN] mnemonic operand, operand, ...`
 *
 * @param {GrammarSymbols<string>} $
 */
function instruction($) {
  return seq(
    optional(field('guard', $.guard)),
    field('mnemonic', alias($.identifier, $.mnemonic)),
    optional(commaSep1(field('operand', $._operand))),
  );
}

/**
 * `name:`
 *
 * @param {GrammarSymbols<string>} $
 */
function label($) {
  return seq(field('name', $.identifier), ':');
}

const DIGITS = /[0-9][0-9_]*/.source;

module.exports = grammar({
  name: 'wave',

  extras: $ => [/[ \t\f\v]/, $.comment],

  word: $ => $.identifier,

  // Block keywords may not be used as mnemonics or names: a stray `endif`
  // is an ERROR rather than an instruction called "endif". `.kernel` and
  // `.end` are reserved too, so that they are never read as a `directive_name`
  // (or a `scope_operand`): a `.end` inside an unclosed `if` still closes the
  // kernel, and error recovery sees it.
  reserved: {
    global: _ => ['if', 'else', 'endif', 'loop', 'endloop', '.kernel', '.end'],
  },

  rules: {
    source_file: $ => seq(
      repeat(choice(
        seq($.kernel, $._newline),
        seq($._statement, $._newline),
        $._newline,
      )),
      optional(choice($.kernel, $._last_statement)),
    ),

    // The last line of a file may lack its newline. Which statements may
    // stand there is chosen for tree-sitter's end-of-file recovery: at end of
    // file it inserts the first MISSING token (lowest symbol number) after
    // which the parse table can reduce on end-of-file, and the parse states
    // after a mnemonic, an operand or a label's colon are shared between
    // kernel bodies and the top level. If an instruction could end the file
    // outside a kernel, then at end of file inside an unterminated kernel
    // (the usual state while a new kernel is typed at the end of a file)
    // recovery would insert a bogus operand or colon instead of ".end", and
    // the whole file would become one ERROR. So an unterminated last line
    // outside a kernel may be a directive, a block, or a label standing alone
    // (spelled by the hidden `_last_label`, aliased to `label`, so that its
    // states are not shared), but not an instruction: that case, an error for
    // the assembler anyway, parses with an ERROR node.
    _last_statement: $ => choice(
      $.directive,
      alias($._last_label, $.label),
      $.if_block,
      $.loop_block,
      seq($.label, choice($.if_block, $.loop_block)),
    ),

    _last_label: $ => label($),

    _newline: _ => /\r?\n/,

    comment: _ => token(seq(choice(';', '#', '//'), /[^\r\n]*/)),

    // ---------------------------------------------------------------- kernel

    kernel: $ => seq(
      '.kernel',
      field('name', $.identifier),
      $._newline,
      body($),
      '.end',
    ),

    // ------------------------------------------------------------ statements

    _statement: $ => choice(
      $.directive,
      $._labelable,
      seq($.label, optional($._labelable)),
    ),

    _labelable: $ => choice(
      $.instruction,
      $.if_block,
      $.loop_block,
    ),

    label: $ => label($),

    directive: $ => seq(
      field('name', $.directive_name),
      optional(commaSep1(field('argument', choice(
        $.integer,
        $.float,
        $.identifier,
        $.typed_name,
      )))),
    ),

    directive_name: _ => /\.[A-Za-z_][A-Za-z0-9_]*/,

    typed_name: $ => seq(
      field('name', $.identifier),
      ':',
      field('type', $.identifier),
    ),

    instruction: $ => instruction($),

    guard: $ => seq('@', optional('!'), field('register', $.predicate)),

    // ---------------------------------------------------------------- blocks

    if_block: $ => seq(
      'if',
      field('condition', choice($.predicate, $.negated_predicate)),
      $._newline,
      body($),
      optional($.else_clause),
      'endif',
    ),

    else_clause: $ => seq('else', $._newline, body($)),

    loop_block: $ => seq('loop', $._newline, body($), 'endloop'),

    // -------------------------------------------------------------- operands

    _operand: $ => choice(
      $.register,
      $.register_pair,
      $.predicate,
      $.negated_predicate,
      $.special_register,
      $.integer,
      $.float,
      $.identifier,
      $.memory_operand,
      $.scope_operand,
    ),

    register_pair: $ => seq(
      field('low', $.register),
      ':',
      field('high', $.register),
    ),

    negated_predicate: $ => seq('!', field('register', $.predicate)),

    memory_operand: $ => seq(
      '[',
      field('base', choice($.register, $.identifier)),
      optional(seq(choice('+', '-'), field('offset', $.integer))),
      ']',
    ),

    // The register-like tokens and the float words share their spelling
    // with `identifier`; they are listed before it and win a tie of equal
    // length (rule order), while a longer identifier such as `r1x`, `p0_ok`
    // or `info` still lexes as one identifier.
    register: _ => /[rR][0-9]+(\.([lL][oO]|[hH][iI]))?/,

    predicate: _ => /[pP][0-9]+/,

    special_register: _ => /[sS][rR]_[A-Za-z0-9_]+/,

    float: _ => token(seq(
      optional('-'),
      choice(
        new RegExp(`${DIGITS}\\.${DIGITS}([eE][+-]?${DIGITS})?`),
        new RegExp(`${DIGITS}[eE][+-]?${DIGITS}`),
        'inf',
        'nan',
      ),
    )),

    integer: _ => token(seq(
      optional('-'),
      choice(
        /0[xX][0-9A-Fa-f_]+/,
        /0[bB][01_]+/,
        new RegExp(DIGITS),
      ),
    )),

    // Spelled like `directive_name`; the parse state always tells which one
    // is expected (statement start vs. operand). The negative precedence only
    // makes it a token of its own (and lets `.kernel`/`.end` win over it).
    scope_operand: _ => token(prec(-1, /\.[A-Za-z_][A-Za-z0-9_]*/)),

    identifier: _ => /[A-Za-z_][A-Za-z0-9_.]*/,
  },
});
