//! `initialize` and `launch`: the capabilities the adapter offers, loading the program and
//! starting the session.

use super::*;

impl Adapter {
    pub(super) fn initialize(&mut self, args: &Value) -> Reply {
        self.lines_start_at1 = args.get("linesStartAt1").and_then(Value::as_bool).unwrap_or(true);
        self.ansi = args.get("supportsANSIStyling").and_then(Value::as_bool).unwrap_or(false);
        self.event("initialized", json!({}));
        Ok(json!({
            "supportsConfigurationDoneRequest": true,
            "supportsFunctionBreakpoints": true,
            "supportsConditionalBreakpoints": true,
            "supportsHitConditionalBreakpoints": true,
            "supportsLogPoints": true,
            "supportsEvaluateForHovers": true,
            "supportsStepBack": true,
            "supportsSetVariable": true,
            "supportsSetExpression": true,
            "supportsExceptionInfoRequest": true,
            "supportsValueFormattingOptions": true,
            "supportsTerminateRequest": true,
            "supportsReadMemoryRequest": true,
            "supportsWriteMemoryRequest": true,
            "supportsDisassembleRequest": true,
            "supportsSteppingGranularity": true,
            "supportsInstructionBreakpoints": true,
            "supportsBreakpointLocationsRequest": true,
            "supportsANSIStyling": true,
            "exceptionBreakpointFilters": [
                {"filter": "traps", "label": "Traps (out of bounds, deadlock, divergent barrier, budget)", "default": true}
            ],
            "breakpointModes": [
                {"mode": "any", "label": "Any active lane", "description": "Stop when the condition holds in any active lane", "appliesTo": ["source", "instruction"]},
                {"mode": "focus", "label": "Focus lane", "description": "Stop when the focus lane is active and the condition holds in it", "appliesTo": ["source", "instruction"]}
            ]
        }))
    }

    pub(super) fn launch(&mut self, args: &Value) -> Reply {
        if self.launched {
            return Err("a program is already being debugged".into());
        }
        let Program {
            module,
            dispatch,
            device,
            source,
            line_offset,
            stop_on_entry,
            warnings,
            from_kernel_source,
        } = launch::load(args)?;
        let kernel = match &dispatch.kernel {
            Some(k) => module.kernels.iter().position(|x| &x.name == k).unwrap_or(0),
            None => 0,
        };
        let dbg = Debugger::new(module, dispatch, device)
            .map_err(|t| format!("the dispatch cannot start: {t}"))?;
        for w in warnings.iter().chain(dbg.session.warnings().iter()) {
            self.output("console", format!("warning: {w}"));
        }
        self.dbg = Some(dbg);
        self.program = Some(ProgramInfo {
            source,
            line_offset,
            from_kernel_source,
            kernel,
            listing: Vec::new(),
        });
        let listing = self.listing();
        if let Some(p) = self.program.as_mut() {
            p.listing = listing;
        }
        self.launched = true;
        self.stop_on_entry = stop_on_entry;
        if self.configured {
            self.start();
        }
        Ok(Value::Null)
    }

    pub(super) fn start(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        if self.stop_on_entry {
            self.stop("entry", 0, "stopped at the kernel's first instruction".into(), Vec::new());
        } else {
            self.resume(Resume::Continue { first: false });
        }
    }
}
