//! The C++ frontend: functions marked `[[wave::kernel]]` (or `__kernel`), parsed by
//! tree-sitter-cpp, to the shared surface syntax ([`super::ast`]).
//!
//! Pointers are buffers (`const float*` read-only, `float*` writable); `int` and `unsigned`
//! are 32 bits, `half` is `f16`. C++'s usual arithmetic conversions apply between operands;
//! a narrowing conversion into a variable, an element or a parameter is E0401 unless written
//! (`(float)d`, `float(d)`, `static_cast<float>(d)`). An unsuffixed float literal is a
//! `double`. `for (T i = a; i < b; i++)` is a counted loop; `switch` on integers (with
//! fall-through) becomes a chain of conditions. The other functions of the file, and function
//! templates instantiated on use, are helpers, inlined where called.

mod items;
mod reparse;

use tree_sitter::Node;
use wave_diag::{Diagnostic, Span};

use super::ast::{
    self, Dialect, Expr, ExprKind, Func, Op, Param, Stmt, StmtKind, TypeKind, TypeRef, UnaryOp,
};
use super::{R, Reported, codes};
use crate::hir::{Kernel, Scalar};
use items::c_constant;

/// Parses `text` and builds the HIR of each kernel, with every diagnostic.
pub fn lower(text: &str) -> (Vec<Kernel>, Vec<Diagnostic>) {
    let (funcs, diagnostics) = parse(text);
    super::typer::lower(text, &funcs, Dialect::CPP, diagnostics)
}

/// OpenCL's `__kernel` is not C++: the parser gets spaces in its place (same length, so every
/// offset holds), and a function after one is a kernel.
pub(crate) fn mask_kernel_keyword(text: &str) -> (String, Vec<usize>) {
    let mut out = text.to_owned();
    let mut at = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find("__kernel") {
        let start = from + i;
        let end = start + "__kernel".len();
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let before = text[..start].chars().next_back().is_some_and(word);
        let after = text[end..].chars().next().is_some_and(word);
        if !before && !after {
            out.replace_range(start..end, "        ");
            at.push(start);
        }
        from = end;
    }
    (out, at)
}

/// The functions of `text` in the shared surface syntax, with the diagnostics of parsing.
pub fn parse(text: &str) -> (Vec<Func>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let (masked, kernel_words) = mask_kernel_keyword(text);
    let Some(tree) =
        super::parse_tree(&masked, &tree_sitter_cpp::LANGUAGE.into(), "C++", &mut diagnostics)
    else {
        return (Vec::new(), diagnostics);
    };
    let root = tree.root_node();
    let mut t = Translator { text, diagnostics: Vec::new(), generics: Vec::new(), temps: 0 };
    let mut funcs = Vec::new();
    let mut previous_end = 0;
    let mut cursor = root.walk();
    for item in root.named_children(&mut cursor) {
        // `__kernel` among the declaration specifiers, before the function's name.
        let after_kernel_word = kernel_words.iter().any(|w| {
            *w >= previous_end
                && item.child_by_field_name("declarator").is_some_and(|d| *w < d.start_byte())
        });
        match item.kind() {
            "function_definition" => {
                funcs.extend(t.function(item, item, Vec::new(), after_kernel_word));
            }
            "template_declaration" => {
                let params = item.child_by_field_name("parameters");
                let mut names = Vec::new();
                if let Some(list) = params {
                    let mut c = list.walk();
                    for p in list.named_children(&mut c).filter(|n| !n.is_extra()) {
                        if p.kind() == "type_parameter_declaration"
                            && let Some(n) = p.named_child(0)
                        {
                            names.push(t.src(n).to_owned());
                        } else {
                            let _ = t.error(
                                codes::UNSUPPORTED,
                                p.byte_range(),
                                "a template parameter is a type (`typename T`)",
                            );
                        }
                    }
                }
                let mut c = item.walk();
                let def = item.named_children(&mut c).find(|n| n.kind() == "function_definition");
                match def {
                    Some(def) => funcs.extend(t.function(item, def, names, false)),
                    None => {
                        let _ = t.error(
                            codes::UNSUPPORTED,
                            item.byte_range(),
                            "templates other than function templates are not supported in kernels",
                        );
                    }
                }
            }
            "declaration" => funcs.extend(t.constants(item)),
            "preproc_def" => funcs.extend(t.define(item)),
            _ => {}
        }
        previous_end = item.end_byte();
    }
    diagnostics.append(&mut t.diagnostics);
    super::syntax_errors(root, &mut diagnostics);
    super::distribute(&mut funcs, &mut diagnostics);
    (funcs, diagnostics)
}

struct Translator<'t> {
    text: &'t str,
    diagnostics: Vec<Diagnostic>,
    /// The type parameters of the template being read.
    generics: Vec<String>,
    /// Compiler-made names so far (a `switch` on an expression).
    temps: u32,
}

/// The scalar a C++ type name stands for.
fn scalar(name: &str) -> Option<Scalar> {
    let words: Vec<&str> = name.split_whitespace().filter(|w| *w != "const").collect();
    Some(match words.as_slice() {
        ["float"] => Scalar::F32,
        ["double"] => Scalar::F64,
        ["half"] | ["_Float16"] | ["wave::half"] => Scalar::F16,
        ["int"] | ["signed"] | ["signed", "int"] | ["int32_t"] | ["std::int32_t"] => Scalar::I32,
        ["unsigned"] | ["unsigned", "int"] | ["uint32_t"] | ["std::uint32_t"] | ["uint"] => {
            Scalar::U32
        }
        ["bool"] => Scalar::Bool,
        ["uint8_t"] | ["std::uint8_t"] | ["unsigned", "char"] => Scalar::U8,
        ["uint16_t"] | ["std::uint16_t"] | ["unsigned", "short"] => Scalar::U16,
        _ => return None,
    })
}

/// The canonical intrinsic a C/C++ math function stands for (`sqrtf`, `std::fmin`, ...).
fn math(name: &str) -> Option<&'static str> {
    let name = name.strip_prefix("std::").unwrap_or(name);
    Some(match name {
        "sqrt" | "sqrtf" => "sqrt",
        "rsqrt" | "rsqrtf" => "rsqrt",
        "abs" | "fabs" | "fabsf" => "abs",
        "floor" | "floorf" => "floor",
        "ceil" | "ceilf" => "ceil",
        "sin" | "sinf" => "sin",
        "cos" | "cosf" => "cos",
        "exp2" | "exp2f" => "exp2",
        "log2" | "log2f" => "log2",
        "fma" | "fmaf" => "fma",
        "min" | "fmin" | "fminf" => "min",
        "max" | "fmax" | "fmaxf" => "max",
        "exp" | "expf" => "exp",
        "log" | "logf" => "log",
        "log10" | "log10f" => "log10",
        "tanh" | "tanhf" => "tanh",
        "pow" | "powf" => "pow",
        "popcount" | "__builtin_popcount" => "popcount",
        "countl_zero" | "__builtin_clz" => "clz",
        "countr_zero" | "__builtin_ctz" => "ctz",
        _ => return None,
    })
}

impl<'t> Translator<'t> {
    fn src(&self, n: Node<'_>) -> &'t str {
        &self.text[n.byte_range()]
    }

    fn error(&mut self, code: &'static str, span: Span, message: impl Into<String>) -> Reported {
        self.diagnostics.push(Diagnostic::error(code, span, message));
        Reported
    }

    fn unsupported(&mut self, n: Node<'_>, what: &str) -> Reported {
        self.error(
            codes::UNSUPPORTED,
            n.byte_range(),
            format!("{what} are not supported in kernels"),
        )
    }

    fn function(
        &mut self,
        whole: Node<'_>,
        def: Node<'_>,
        generics: Vec<String>,
        kernel_word: bool,
    ) -> Option<Func> {
        // `[[wave::kernel, wave::workgroup(64, 1, 1)]]`.
        let mut kernel = kernel_word;
        let mut workgroup = None;
        let mut c = def.walk();
        for decl in def.named_children(&mut c).filter(|n| n.kind() == "attribute_declaration") {
            let mut ac = decl.walk();
            for attr in decl.named_children(&mut ac) {
                let prefix = attr.child_by_field_name("prefix").map(|p| self.src(p));
                let name = attr.child_by_field_name("name").map(|p| self.src(p));
                match (prefix, name) {
                    (Some("wave") | None, Some("kernel")) => kernel = true,
                    (Some("wave"), Some("workgroup")) => {
                        let args =
                            attr.named_child(attr.named_child_count().saturating_sub(1) as u32);
                        let inner = args.filter(|a| a.kind() == "argument_list").map(|a| {
                            self.src(a).trim_start_matches('(').trim_end_matches(')').to_owned()
                        });
                        match inner.as_deref().and_then(super::dims) {
                            Some(size) => workgroup = Some((size, decl.byte_range())),
                            None => {
                                let _ = self.error(
                                    codes::BAD_CALL,
                                    attr.byte_range(),
                                    "a workgroup size is `wave::workgroup(64, 1, 1)`",
                                );
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        let declarator = def.child_by_field_name("declarator")?;
        if declarator.kind() != "function_declarator" {
            return None;
        }
        let name_node = declarator.child_by_field_name("declarator")?;
        self.generics = generics.clone();
        if kernel
            && let Some(ty) = def.child_by_field_name("type")
            && self.src(ty) != "void"
        {
            let _ = self.error(
                codes::UNSUPPORTED,
                ty.byte_range(),
                "a kernel returns `void`: write results to a buffer",
            );
        }
        let mut params = Vec::new();
        if let Some(list) = declarator.child_by_field_name("parameters") {
            let mut c = list.walk();
            for p in list.named_children(&mut c).filter(|n| !n.is_extra()) {
                if p.kind() == "comment" {
                    continue;
                }
                if let Ok(p) = self.param(p) {
                    params.push(p);
                }
            }
        }
        let body = match def.child_by_field_name("body") {
            Some(b) => self.block(b),
            None => Vec::new(),
        };
        self.generics.clear();
        Some(Func {
            name: self.src(name_node).to_owned(),
            name_span: name_node.byte_range(),
            span: whole.byte_range(),
            kernel,
            workgroup: if kernel { workgroup } else { None },
            generics,
            params,
            body,
            diagnostics: Vec::new(),
            constant: None,
        })
    }

    fn param(&mut self, p: Node<'_>) -> R<Param> {
        if p.kind() != "parameter_declaration" {
            return Err(self.error(
                codes::UNSUPPORTED,
                p.byte_range(),
                "parameters are a type and a name: `const float* a`, `uint32_t n`",
            ));
        }
        let ty_node = p.child_by_field_name("type").ok_or(Reported)?;
        let Some(declarator) = p.child_by_field_name("declarator") else {
            return Err(self.error(codes::UNSUPPORTED, p.byte_range(), "a parameter needs a name"));
        };
        let const_data = {
            let mut c = p.walk();
            p.named_children(&mut c).any(|q| q.kind() == "type_qualifier" && self.src(q) == "const")
        };
        let (name, ty) = match declarator.kind() {
            "identifier" => (declarator, self.ty(ty_node)),
            "pointer_declarator" => {
                let inner = declarator.child_by_field_name("declarator").ok_or(Reported)?;
                if inner.kind() != "identifier" {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        declarator.byte_range(),
                        "a buffer is a pointer to scalars: `const float* a` (no pointers to pointers)",
                    ));
                }
                let elem = self.ty(ty_node);
                let kind = match elem.kind {
                    TypeKind::Scalar(s) => TypeKind::Buffer { elem: s, writable: !const_data },
                    _ => TypeKind::Unknown(self.src(p).to_owned()),
                };
                (inner, TypeRef { kind, span: ty_node.start_byte()..declarator.start_byte() + 1 })
            }
            _ => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    declarator.byte_range(),
                    "a parameter is a scalar or a pointer (references and arrays are not supported)",
                ));
            }
        };
        Ok(Param {
            name: self.src(name).to_owned(),
            span: name.byte_range(),
            ty: Some(ty),
            whole: p.byte_range(),
            // (`const float* a` is a read-only buffer, itself assignable: only a `const`
            // scalar is fixed.)
            mutable: !(const_data && declarator.kind() == "identifier"),
        })
    }

    fn ty(&self, n: Node<'_>) -> TypeRef {
        let text = self.src(n);
        let kind = match scalar(text) {
            Some(s) => TypeKind::Scalar(s),
            None if self.generics.iter().any(|g| g == text) => TypeKind::Generic(text.to_owned()),
            None => TypeKind::Unknown(text.to_owned()),
        };
        TypeRef { kind, span: n.byte_range() }
    }

    fn block(&mut self, n: Node<'_>) -> Vec<Stmt> {
        let mut out = Vec::new();
        let mut c = n.walk();
        for s in n.named_children(&mut c) {
            let _ = self.stmt(s, &mut out);
        }
        out
    }

    /// A statement as a list (a declaration of several names gives several).
    fn body(&mut self, n: Option<Node<'_>>) -> Vec<Stmt> {
        let mut out = Vec::new();
        if let Some(n) = n {
            if n.kind() == "compound_statement" {
                return self.block(n);
            }
            let _ = self.stmt(n, &mut out);
        }
        out
    }

    fn stmt(&mut self, n: Node<'_>, out: &mut Vec<Stmt>) -> R<()> {
        let span = n.byte_range();
        let kind = match n.kind() {
            "comment" | "preproc_include" | "preproc_def" | "preproc_call" => return Ok(()),
            "expression_statement" => {
                let Some(e) = n.named_child(0) else { return Ok(()) };
                self.effect(e)?
            }
            "declaration" => return self.declaration(n, out),
            "compound_statement" => StmtKind::Block(self.block(n)),
            "if_statement" => {
                let cond = self.condition(n)?;
                let then = self.body(n.child_by_field_name("consequence"));
                let otherwise =
                    self.body(n.child_by_field_name("alternative").and_then(|a| a.named_child(0)));
                StmtKind::If(cond, then, otherwise)
            }
            "while_statement" => {
                let cond = self.condition(n)?;
                StmtKind::While(cond, self.body(n.child_by_field_name("body")))
            }
            "do_statement" => {
                let body = self.body(n.child_by_field_name("body"));
                let cond = self.expr(n.child_by_field_name("condition").ok_or(Reported)?)?;
                StmtKind::DoWhile(body, cond)
            }
            "for_statement" => return self.for_statement(n, out),
            "switch_statement" => return self.switch(n, out),
            "break_statement" => StmtKind::Break,
            "continue_statement" => StmtKind::Continue,
            "return_statement" => {
                let value = match n.named_child(0) {
                    Some(v) => Some(self.expr(v)?),
                    None => None,
                };
                StmtKind::Return(value)
            }
            "goto_statement" | "labeled_statement" => {
                return Err(self.unsupported(n, "`goto` and labels"));
            }
            "try_statement" | "throw_statement" => return Err(self.unsupported(n, "exceptions")),
            "for_range_loop" => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    span,
                    "kernels count with `for (T i = a; i < b; i++)`: range-based `for` is not supported",
                ));
            }
            other => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    span,
                    format!(
                        "`{}` is not supported in kernels",
                        other.replace('_', " ").trim_end_matches(" statement")
                    ),
                ));
            }
        };
        out.push(Stmt { kind, span });
        Ok(())
    }

    fn condition(&mut self, n: Node<'_>) -> R<Expr> {
        let c = n.child_by_field_name("condition").ok_or(Reported)?;
        let c = if c.kind() == "condition_clause" {
            let v = c.child_by_field_name("value").ok_or(Reported)?;
            if c.child_by_field_name("initializer").is_some() || v.kind() == "declaration" {
                return Err(self.unsupported(c, "declarations in conditions"));
            }
            v
        } else {
            c
        };
        self.expr(c)
    }

    /// An expression statement: an assignment, `i++`, or a call.
    fn effect(&mut self, e: Node<'_>) -> R<StmtKind> {
        let assigns = |n: Node<'_>| {
            n.kind() == "assignment_expression"
                && n.child_by_field_name("operator").is_some_and(|o| o.kind() == "=")
        };
        match e.kind() {
            // `a = b = 0`: each target, left to right, gets the one value.
            "assignment_expression"
                if assigns(e) && e.child_by_field_name("right").is_some_and(assigns) =>
            {
                let mut targets = Vec::new();
                let mut at = e;
                while assigns(at) {
                    targets.push(self.expr(at.child_by_field_name("left").ok_or(Reported)?)?);
                    at = at.child_by_field_name("right").ok_or(Reported)?;
                }
                let value = self.expr(at)?;
                Ok(ast::assign_all(targets, vec![value], &e.byte_range(), true))
            }
            // `std::swap(a, b)`.
            "call_expression"
                if e.child_by_field_name("function")
                    .is_some_and(|f| matches!(self.src(f), "std::swap" | "swap")) =>
            {
                let list = e.child_by_field_name("arguments").ok_or(Reported)?;
                let mut c = list.walk();
                let mut args = Vec::new();
                for a in list.named_children(&mut c).filter(|n| !n.is_extra()) {
                    args.push(self.expr(a)?);
                }
                if args.len() != 2 {
                    return Err(self.error(
                        codes::BAD_CALL,
                        e.byte_range(),
                        "`std::swap` takes two places",
                    ));
                }
                let values = args.iter().rev().cloned().collect();
                Ok(ast::assign_all(args, values, &e.byte_range(), true))
            }
            "assignment_expression" => {
                let sym = e.child_by_field_name("operator").map(|o| self.src(o)).unwrap_or("=");
                let target = self.expr(e.child_by_field_name("left").ok_or(Reported)?)?;
                let value = self.expr(e.child_by_field_name("right").ok_or(Reported)?)?;
                let op = match sym {
                    "=" => None,
                    _ => {
                        let s = sym.trim_end_matches('=');
                        match Op::from_text(s) {
                            Some(op) => Some((op, s.to_owned())),
                            None => {
                                return Err(self.error(
                                    codes::UNSUPPORTED,
                                    e.byte_range(),
                                    format!("the operator `{sym}` is not supported"),
                                ));
                            }
                        }
                    }
                };
                Ok(StmtKind::Assign { target, op, value, annotation: None })
            }
            "update_expression" => {
                let sym = e.child_by_field_name("operator").map(|o| self.src(o)).unwrap_or("++");
                let target = self.expr(e.child_by_field_name("argument").ok_or(Reported)?)?;
                let one = Expr::new(ExprKind::Int(1, None), e.byte_range());
                let op =
                    if sym == "++" { (Op::Add, "+".to_owned()) } else { (Op::Sub, "-".to_owned()) };
                Ok(StmtKind::Assign { target, op: Some(op), value: one, annotation: None })
            }
            "comma_expression" => Err(self.unsupported(e, "comma expressions")),
            _ => Ok(StmtKind::Expr(self.expr(e)?)),
        }
    }

    /// `float x = e;`, `auto x = e;`, `const uint32_t a = 1, b = 2;`, `float acc[4] = {};`,
    /// `wave::local_array<float, 256> tile;`.
    fn declaration(&mut self, n: Node<'_>, out: &mut Vec<Stmt>) -> R<()> {
        let span = n.byte_range();
        let ty_node = n.child_by_field_name("type").ok_or(Reported)?;
        let constant = {
            let mut c = n.walk();
            n.named_children(&mut c).any(|q| q.kind() == "type_qualifier" && self.src(q) == "const")
        };
        let mut c = n.walk();
        let declarators: Vec<Node<'_>> = n.children_by_field_name("declarator", &mut c).collect();
        // Local Memory: `wave::local_array<float, 256> tile;`
        if ty_node.kind() == "qualified_identifier"
            && let Some(tt) = ty_node.child_by_field_name("name")
            && tt.kind() == "template_type"
            && tt.child_by_field_name("name").is_some_and(|nm| self.src(nm) == "local_array")
        {
            let args = tt.child_by_field_name("arguments").ok_or(Reported)?;
            let mut ac = args.walk();
            let parts: Vec<Node<'_>> =
                args.named_children(&mut ac).filter(|n| !n.is_extra()).collect();
            let (elem, len, cols) = match parts.as_slice() {
                [elem, len] => (elem, len, None),
                [elem, rows, cols] => (elem, rows, Some(*cols)),
                _ => {
                    return Err(self.error(
                        codes::BAD_CALL,
                        ty_node.byte_range(),
                        "`local_array` takes an element type and a constant length (or two, rows and columns): `wave::local_array<float, 256> tile;`",
                    ));
                }
            };
            let elem = self.ty(elem.named_child(0).unwrap_or(*elem));
            for d in declarators {
                if d.kind() != "identifier" {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        d.byte_range(),
                        "a local array is declared without a value: `wave::local_array<float, 256> tile;`",
                    ));
                }
                let len = self.literal(*len)?;
                let columns = match cols {
                    Some(c) => Some(self.literal(c)?),
                    None => None,
                };
                out.push(Stmt {
                    kind: StmtKind::Array {
                        name: self.src(d).to_owned(),
                        name_span: d.byte_range(),
                        local: true,
                        elem: elem.clone(),
                        len,
                        columns,
                    },
                    span: span.clone(),
                });
            }
            return Ok(());
        }
        let ty = match ty_node.kind() {
            "placeholder_type_specifier" => None,
            _ => Some(self.ty(ty_node)),
        };
        for d in declarators {
            let (target, value) = match d.kind() {
                "init_declarator" => (
                    d.child_by_field_name("declarator").ok_or(Reported)?,
                    d.child_by_field_name("value"),
                ),
                _ => (d, None),
            };
            match target.kind() {
                "identifier" => {
                    let value = match value {
                        Some(v) if v.kind() == "initializer_list" => {
                            let mut vc = v.walk();
                            let items: Vec<Node<'_>> = v.named_children(&mut vc).collect();
                            match items.as_slice() {
                                [one] => Some(self.expr(*one)?),
                                _ => {
                                    return Err(self.error(
                                        codes::UNSUPPORTED,
                                        v.byte_range(),
                                        "a scalar is initialised with one value",
                                    ));
                                }
                            }
                        }
                        Some(v) => Some(self.expr(v)?),
                        None => None,
                    };
                    if ty.is_none() && value.is_none() {
                        return Err(self.error(
                            codes::UNSUPPORTED,
                            d.byte_range(),
                            "`auto` needs a value",
                        ));
                    }
                    out.push(Stmt {
                        kind: StmtKind::Let {
                            name: self.src(target).to_owned(),
                            name_span: target.byte_range(),
                            ty: ty.clone(),
                            value,
                            mutable: !constant,
                        },
                        span: span.clone(),
                    });
                }
                "array_declarator" => {
                    // `float acc[4] = {};`: each thread's own, zero-filled.
                    let name = target.child_by_field_name("declarator").ok_or(Reported)?;
                    let size = target.child_by_field_name("size").ok_or_else(|| {
                        self.error(
                            codes::UNSUPPORTED,
                            target.byte_range(),
                            "a private array has a constant size: `float acc[4] = {};`",
                        )
                    })?;
                    if let Some(v) = value {
                        let mut vc = v.walk();
                        let zero = v.kind() == "initializer_list"
                            && v.named_children(&mut vc).all(|x| {
                                self.src(x)
                                    .trim_end_matches(['f', 'F', 'u', 'U'])
                                    .parse::<f64>()
                                    .ok()
                                    == Some(0.0)
                            });
                        if !zero {
                            return Err(self.error(
                                codes::UNSUPPORTED,
                                v.byte_range(),
                                "a private array starts zero-filled (`= {}`): assign its elements after",
                            ));
                        }
                    }
                    let Some(elem) = ty.clone() else {
                        return Err(self.error(
                            codes::UNSUPPORTED,
                            d.byte_range(),
                            "an array has an element type, not `auto`",
                        ));
                    };
                    let len = self.literal(size)?;
                    out.push(Stmt {
                        kind: StmtKind::Array {
                            name: self.src(name).to_owned(),
                            name_span: name.byte_range(),
                            local: false,
                            elem,
                            len,
                            columns: None,
                        },
                        span: span.clone(),
                    });
                }
                "pointer_declarator" | "reference_declarator" => {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        target.byte_range(),
                        "local pointers and references are not supported: buffers are parameters",
                    ));
                }
                _ => {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        target.byte_range(),
                        "this declaration is not supported in kernels",
                    ));
                }
            }
        }
        Ok(())
    }

    /// An integer constant (an array length).
    fn literal(&mut self, n: Node<'_>) -> R<Expr> {
        let text = self.src(n).trim_end_matches(['u', 'U', 'l', 'L']);
        match super::parse_int(text) {
            Some(v) => Ok(Expr::new(ExprKind::Int(v, None), n.byte_range())),
            // A template argument that names a constant reads as a type.
            None if n.kind() == "type_descriptor" => {
                Ok(Expr::new(ExprKind::Name(self.src(n).trim().to_owned()), n.byte_range()))
            }
            // A constant, or arithmetic on constants (the typer folds it).
            None => self.expr(n),
        }
    }

    /// `for (init; cond; update) body`: a counted loop where it is `for (T i = a; i < b;
    /// i++)` (or `i += k`, or `i > b` with `i--`/`i -= k`); else `init; while (cond) { body;
    /// update }`, which needs a body without `continue`.
    fn for_statement(&mut self, n: Node<'_>, out: &mut Vec<Stmt>) -> R<()> {
        let span = n.byte_range();
        let init = n.child_by_field_name("initializer");
        let cond = n.child_by_field_name("condition");
        let update = n.child_by_field_name("update");
        let body_node = n.child_by_field_name("body");
        if let Some(counted) = self.counted(init, cond, update)? {
            let (var, var_span, ty, start, end, step) = counted;
            let body = self.body(body_node);
            out.push(Stmt {
                kind: StmtKind::For {
                    step: Expr::new(ExprKind::Int(step, None), var_span.clone()),
                    var,
                    var_span,
                    ty,
                    declare: true,
                    start: Some(start),
                    end,
                    body,
                },
                span,
            });
            return Ok(());
        }
        let mut stmts = Vec::new();
        if let Some(i) = init {
            if i.kind() == "declaration" {
                self.declaration(i, &mut stmts)?;
            } else {
                let kind = self.effect(i)?;
                stmts.push(Stmt { kind, span: i.byte_range() });
            }
        }
        let cond = match cond {
            Some(c) => self.expr(c)?,
            None => Expr::new(ExprKind::Bool(true), span.clone()),
        };
        let mut body = self.body(body_node);
        if ast::continues(&body) && update.is_some() {
            return Err(self.error(
                codes::UNSUPPORTED,
                span,
                "a `continue` in this `for` loop would skip its update: write the loop as `for (T i = a; i < b; i++)`, or as a `while` loop",
            ));
        }
        if let Some(u) = update {
            let kind = self.effect(u)?;
            body.push(Stmt { kind, span: u.byte_range() });
        }
        stmts.push(Stmt { kind: StmtKind::While(cond, body), span: span.clone() });
        out.push(Stmt { kind: StmtKind::Block(stmts), span });
        Ok(())
    }

    #[allow(clippy::type_complexity, reason = "the parts of one counted loop")]
    fn counted(
        &mut self,
        init: Option<Node<'_>>,
        cond: Option<Node<'_>>,
        update: Option<Node<'_>>,
    ) -> R<Option<(String, Span, Option<TypeRef>, Expr, Expr, i64)>> {
        let (Some(init), Some(cond), Some(update)) = (init, cond, update) else { return Ok(None) };
        // `T i = a`
        if init.kind() != "declaration" {
            return Ok(None);
        }
        let mut c = init.walk();
        let ds: Vec<Node<'_>> = init.children_by_field_name("declarator", &mut c).collect();
        let [d] = ds.as_slice() else { return Ok(None) };
        let (Some(var), Some(start)) =
            (d.child_by_field_name("declarator"), d.child_by_field_name("value"))
        else {
            return Ok(None);
        };
        if var.kind() != "identifier" || start.kind() == "initializer_list" {
            return Ok(None);
        }
        let name = self.src(var);
        let ty_node = init.child_by_field_name("type").ok_or(Reported)?;
        let ty = (ty_node.kind() != "placeholder_type_specifier").then(|| self.ty(ty_node));
        // `i < b` or `i > b` (or `b > i`, `b < i`)
        if cond.kind() != "binary_expression" {
            return Ok(None);
        }
        let (Some(l), Some(r)) =
            (cond.child_by_field_name("left"), cond.child_by_field_name("right"))
        else {
            return Ok(None);
        };
        let sym = cond.child_by_field_name("operator").map(|o| self.src(o)).unwrap_or("");
        let field = |n: Node<'_>, f: &str| n.child_by_field_name(f).map(|x| self.src(x));
        let update_parts = match update.kind() {
            "update_expression" => (field(update, "argument"), field(update, "operator"), None),
            "assignment_expression" => {
                (field(update, "left"), field(update, "operator"), field(update, "right"))
            }
            _ => return Ok(None),
        };
        let Some((step, bound_left)) =
            super::counting(name, (self.src(l), sym, self.src(r)), update_parts)
        else {
            return Ok(None);
        };
        let bound = if bound_left { l } else { r };
        let start = self.expr(start)?;
        let end = self.expr(bound)?;
        Ok(Some((name.to_owned(), var.byte_range(), ty, start, end, step)))
    }

    /// `switch (v) { case 1: case 2: a; break; case 3: b; default: c; }`: a chain of
    /// conditions on `v`, each case running its statements and those it falls through to,
    /// up to a `break`.
    fn switch(&mut self, n: Node<'_>, out: &mut Vec<Stmt>) -> R<()> {
        let span = n.byte_range();
        let value = self.condition(n)?;
        let mut stmts = Vec::new();
        let value = if let ExprKind::Name(_) = value.kind {
            value
        } else {
            self.temps += 1;
            let name = format!("switch#{}", self.temps);
            let vspan = value.span.clone();
            stmts.push(Stmt {
                kind: StmtKind::Let {
                    name: name.clone(),
                    name_span: vspan.clone(),
                    ty: None,
                    value: Some(value),
                    mutable: false,
                },
                span: vspan.clone(),
            });
            Expr::new(ExprKind::Name(name), vspan)
        };
        // Each section: its labels (none for `default`), its statements, and whether they
        // end in a `break` (or fall through to the next).
        let body = n.child_by_field_name("body").ok_or(Reported)?;
        let mut sections: Vec<Section> = Vec::new();
        let mut c = body.walk();
        for case in body.named_children(&mut c) {
            if case.kind() == "comment" {
                continue;
            }
            if case.kind() != "case_statement" {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    case.byte_range(),
                    "statements in a `switch` belong to a `case`",
                ));
            }
            let label = match case.child_by_field_name("value") {
                Some(v) => Some(self.expr(v)?),
                None => None,
            };
            let mut cc = case.walk();
            let mut body_stmts = Vec::new();
            let mut ends = false;
            let parts: Vec<Node<'_>> = case
                .named_children(&mut cc)
                .filter(|s| Some(*s) != case.child_by_field_name("value") && s.kind() != "comment")
                .collect();
            for (i, s) in parts.iter().enumerate() {
                if s.kind() == "break_statement" && i + 1 == parts.len() {
                    ends = true;
                    continue;
                }
                self.stmt(*s, &mut body_stmts)?;
            }
            if breaks(&body_stmts) {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    case.byte_range(),
                    "a `break` out of a `switch` ends its `case`: one inside an `if` is not supported",
                ));
            }
            ends = ends
                || body_stmts
                    .last()
                    .is_some_and(|s| matches!(s.kind, StmtKind::Return(_) | StmtKind::Continue));
            // (`case 1: case 2: ...`: an empty section falls into the next.)
            sections.push((label.map(|l| vec![l]), body_stmts, ends, case.byte_range()));
        }
        // What each section runs: its statements, then those it falls into.
        let runs: Vec<Vec<Stmt>> = (0..sections.len())
            .map(|i| {
                let mut all = Vec::new();
                for s in &sections[i..] {
                    all.extend(s.1.iter().cloned());
                    if s.2 {
                        break;
                    }
                }
                all
            })
            .collect();
        let mut otherwise: Vec<Stmt> = sections
            .iter()
            .position(|s| s.0.is_none())
            .map(|d| runs[d].clone())
            .unwrap_or_default();
        for (i, (labels, _, _, at)) in sections.iter().enumerate().rev() {
            let Some(labels) = labels else { continue };
            let cond = labels
                .iter()
                .map(|l| {
                    Expr::new(
                        ExprKind::Binary(
                            Op::Eq,
                            "==".into(),
                            Box::new(value.clone()),
                            Box::new(l.clone()),
                        ),
                        l.span.clone(),
                    )
                })
                .reduce(|a, b| {
                    let s = a.span.start..b.span.end;
                    Expr::new(ExprKind::Binary(Op::Or, "||".into(), Box::new(a), Box::new(b)), s)
                });
            let Some(cond) = cond else { continue };
            otherwise = vec![Stmt {
                kind: StmtKind::If(cond, runs[i].clone(), otherwise),
                span: at.clone(),
            }];
        }
        stmts.extend(otherwise);
        out.push(Stmt { kind: StmtKind::Block(stmts), span });
        Ok(())
    }

    fn expr(&mut self, n: Node<'_>) -> R<Expr> {
        let span = n.byte_range();
        let e = |kind| Ok(Expr::new(kind, span.clone()));
        match n.kind() {
            "parenthesized_expression" => {
                let inner = self.expr(n.named_child(0).ok_or(Reported)?)?;
                Ok(Expr { span, ..inner })
            }
            "number_literal" => match number(self.src(n)) {
                Some(kind) => e(kind),
                None => Err(self.error(codes::TYPE_MISMATCH, span, "this number is not supported (or does not fit in 64 bits)")),
            },
            "true" => e(ExprKind::Bool(true)),
            "false" => e(ExprKind::Bool(false)),
            // `M_PI` and its kin (`<cmath>`'s macros): `double` literals.
            "identifier" | "qualified_identifier" if c_constant(self.src(n)).is_some() => {
                e(ExprKind::Float(c_constant(self.src(n)).unwrap_or(0.0), Some(Scalar::F64)))
            }
            "identifier" => e(ExprKind::Name(self.src(n).to_owned())),
            // `(half)-x`: a cast of `-x` the grammar reads as a subtraction, since it does not
            // know `half` (or `uint32_t`) names a type.
            "binary_expression"
                if n.child_by_field_name("left").is_some_and(|l| {
                    l.kind() == "parenthesized_expression"
                        && l.named_child(0).is_some_and(|t| {
                            t.kind() == "identifier" && scalar(self.src(t)).is_some()
                        })
                }) && n
                    .child_by_field_name("operator")
                    .is_some_and(|o| matches!(self.src(o), "-" | "+")) =>
            {
                let left = n.child_by_field_name("left").ok_or(Reported)?;
                let right = n.child_by_field_name("right").ok_or(Reported)?;
                let t = left.named_child(0).ok_or(Reported)?;
                if right.kind() == "binary_expression" {
                    return Err(self.error(
                        codes::UNSUPPORTED,
                        span,
                        format!("write `({})(...)` around what is converted: here the grammar cannot tell a cast from a subtraction", self.src(t)),
                    ));
                }
                let sym = n.child_by_field_name("operator").map(|o| self.src(o)).unwrap_or("-");
                let arg = self.expr(right)?;
                let op = if sym == "-" { UnaryOp::Neg } else { UnaryOp::Plus };
                let inner = Expr::new(ExprKind::Unary(op, sym.to_owned(), Box::new(arg)), t.end_byte()..span.end);
                e(ExprKind::Cast(self.ty(t), Box::new(inner)))
            }
            "binary_expression" => {
                let l = self.expr(n.child_by_field_name("left").ok_or(Reported)?)?;
                let r = self.expr(n.child_by_field_name("right").ok_or(Reported)?)?;
                let sym = n.child_by_field_name("operator").map(|o| self.src(o)).unwrap_or("");
                match Op::from_text(sym).filter(|o| *o != Op::UShr && *o != Op::IntDiv) {
                    Some(op) => e(ExprKind::Binary(op, sym.to_owned(), Box::new(l), Box::new(r))),
                    None => Err(self.error(codes::UNSUPPORTED, span, format!("the operator `{sym}` is not supported"))),
                }
            }
            "unary_expression" => {
                let sym = n.child_by_field_name("operator").map(|o| self.src(o)).unwrap_or("");
                let arg = self.expr(n.child_by_field_name("argument").ok_or(Reported)?)?;
                let op = match sym {
                    "-" => UnaryOp::Neg,
                    "+" => UnaryOp::Plus,
                    "!" | "not" => UnaryOp::Not,
                    _ => UnaryOp::BitNot,
                };
                e(ExprKind::Unary(op, sym.to_owned(), Box::new(arg)))
            }
            "conditional_expression" => {
                let c = self.expr(n.child_by_field_name("condition").ok_or(Reported)?)?;
                let a = self.expr(n.child_by_field_name("consequence").ok_or(Reported)?)?;
                let b = self.expr(n.child_by_field_name("alternative").ok_or(Reported)?)?;
                e(ExprKind::Cond(Box::new(c), Box::new(a), Box::new(b)))
            }
            "subscript_expression" => {
                let base = self.expr(n.child_by_field_name("argument").ok_or(Reported)?)?;
                let indices = n.child_by_field_name("indices").ok_or(Reported)?;
                if indices.named_child_count() != 1 {
                    return Err(self.error(codes::UNSUPPORTED, indices.byte_range(), "an index is one expression"));
                }
                let index = self.expr(indices.named_child(0).ok_or(Reported)?)?;
                e(ExprKind::Index(Box::new(base), Box::new(index)))
            }
            "cast_expression" if self.misread_cast(n) => self.reparse(n),
            "cast_expression" => {
                let t = n.child_by_field_name("type").ok_or(Reported)?;
                let t = self.ty(t.child_by_field_name("type").unwrap_or(t));
                let v = self.expr(n.child_by_field_name("value").ok_or(Reported)?)?;
                e(ExprKind::Cast(t, Box::new(v)))
            }
            "call_expression" => self.call(n),
            "update_expression" | "assignment_expression" => Err(self.error(
                codes::UNSUPPORTED,
                span,
                "an assignment or `++` inside an expression is not supported: write it as its own statement",
            )),
            "pointer_expression" => Err(self.unsupported(n, "pointer dereferences and addresses (`*p`, `&x`)")),
            "field_expression" => Err(self.error(codes::UNSUPPORTED, span, format!("`{}`: kernels have no structs or fields", self.src(n)))),
            "new_expression" | "delete_expression" => Err(self.unsupported(n, "`new` and `delete`")),
            "lambda_expression" => Err(self.unsupported(n, "lambdas")),
            "sizeof_expression" => Err(self.unsupported(n, "`sizeof` expressions")),
            other => Err(self.error(
                codes::UNSUPPORTED,
                span,
                format!("{} expressions are not supported in kernels", other.replace('_', " ")),
            )),
        }
    }

    fn call(&mut self, n: Node<'_>) -> R<Expr> {
        let span = n.byte_range();
        let f = n.child_by_field_name("function").ok_or(Reported)?;
        let mut args = Vec::new();
        let callee = self.src(f).to_owned();
        if let Some(list) = n.child_by_field_name("arguments") {
            let mut c = list.walk();
            let nodes: Vec<Node<'_>> = list
                .named_children(&mut c)
                .filter(|n| !n.is_extra() && n.kind() != "comment")
                .collect();
            match nodes.as_slice() {
                // `std::min({a, b, c})`: the values of the list.
                [l] if l.kind() == "initializer_list"
                    && matches!(math(&callee), Some("min" | "max")) =>
                {
                    let mut lc = l.walk();
                    for a in
                        l.named_children(&mut lc).filter(|n| !n.is_extra() && n.kind() != "comment")
                    {
                        args.push(self.expr(a)?);
                    }
                }
                _ => {
                    for a in nodes {
                        args.push(self.expr(a)?);
                    }
                }
            }
        }
        let cast = |t: TypeRef, args: Vec<Expr>, me: &mut Self| -> R<Expr> {
            let [a] = <[Expr; 1]>::try_from(args).map_err(|_| {
                me.error(codes::BAD_CALL, span.clone(), "a conversion takes 1 value")
            })?;
            Ok(Expr::new(ExprKind::Cast(t, Box::new(a)), span.clone()))
        };
        let (name, types) = match f.kind() {
            // `float(x)`: a functional cast.
            "primitive_type" | "sized_type_specifier" => return cast(self.ty(f), args, self),
            // `(half)(x)`: a C-style cast the grammar reads as a call, since it does not know
            // `half` (or `uint32_t`) names a type.
            "parenthesized_expression"
                if f.named_child(0)
                    .is_some_and(|t| t.kind() == "identifier" && scalar(self.src(t)).is_some()) =>
            {
                let t = f.named_child(0).ok_or(Reported)?;
                return cast(self.ty(t), args, self);
            }
            "identifier" => {
                let name = math(&callee).map_or(callee.clone(), str::to_owned);
                (name, Vec::new())
            }
            "qualified_identifier" => {
                let scope = f.child_by_field_name("scope").map(|s| self.src(s)).unwrap_or("");
                let last = f.child_by_field_name("name").map(|s| self.src(s)).unwrap_or("");
                match scope {
                    "wave" => (last.to_owned(), Vec::new()),
                    // (An unknown `std::` function reaches the typer, which says what is
                    // close.)
                    "std" => (math(last).unwrap_or(last).to_owned(), Vec::new()),
                    _ => {
                        return Err(self.error(
                            codes::UNKNOWN_NAME,
                            f.byte_range(),
                            format!("`{callee}` is not an intrinsic or a function of this file"),
                        ));
                    }
                }
            }
            "template_function" => {
                let name = f.child_by_field_name("name").map(|s| self.src(s)).unwrap_or("");
                let mut types = Vec::new();
                if let Some(list) = f.child_by_field_name("arguments") {
                    let mut c = list.walk();
                    for a in list.named_children(&mut c).filter(|n| !n.is_extra()) {
                        types.push(self.ty(a.child_by_field_name("type").unwrap_or(a)));
                    }
                }
                if name == "static_cast" {
                    let [t] = <[TypeRef; 1]>::try_from(types).map_err(|_| {
                        self.error(codes::BAD_CALL, f.byte_range(), "`static_cast` takes one type")
                    })?;
                    return cast(t, args, self);
                }
                let name = math(name).unwrap_or(name).to_owned();
                (name, types)
            }
            _ => {
                return Err(self.error(
                    codes::UNSUPPORTED,
                    f.byte_range(),
                    "kernels call intrinsics (`wave::...`), math functions and the functions of this file",
                ));
            }
        };
        Ok(Expr::new(
            ExprKind::Call { name, callee, callee_span: f.byte_range(), args, types },
            span,
        ))
    }
}

/// A `switch` section: its labels (none for `default`), its statements, whether they end the
/// `switch` (a `break`, a `return`) rather than fall into the next section, and where it is.
type Section = (Option<Vec<Expr>>, Vec<Stmt>, bool, Span);

/// A C++ number literal: an integer (`u` makes it `u32`; unsuffixed, it takes the type the
/// context wants), or a float (`f` makes it `float`; unsuffixed, a `double`).
fn number(text: &str) -> Option<ExprKind> {
    let t = text.replace('\'', "");
    let lower = t.to_ascii_lowercase();
    let hex = lower.starts_with("0x");
    let float = !hex && (lower.contains('.') || lower.contains('e'));
    if float {
        let (digits, suffix) = match lower.strip_suffix('f') {
            Some(d) => (d, Some(Scalar::F32)),
            None => (lower.strip_suffix('l').unwrap_or(&lower), Some(Scalar::F64)),
        };
        return digits.parse::<f64>().ok().map(|v| ExprKind::Float(v, suffix));
    }
    let digits = lower.trim_end_matches(['u', 'l']);
    let suffix = lower[digits.len()..].contains('u').then_some(Scalar::U32);
    super::parse_int(digits).map(|v| ExprKind::Int(v, suffix))
}

/// `body` has a `break` (not of a loop inside it).
fn breaks(body: &[Stmt]) -> bool {
    body.iter().any(|s| match &s.kind {
        StmtKind::Break => true,
        StmtKind::If(_, a, b) => breaks(a) || breaks(b),
        StmtKind::Block(b) | StmtKind::Seq(b) => breaks(b),
        _ => false,
    })
}
