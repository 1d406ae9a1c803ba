//! The VS Code extension's launch-configuration schema, written from the debug adapter's
//! [`wave_dap::launch::SETTINGS`]: the `configurationAttributes` object of the `wave` debugger
//! in `editors/vscode/package.json`. The rest of the file is left as it is.

use wave_dap::launch::{Kind, SETTINGS};

/// `package` with its `configurationAttributes` object replaced by the one the settings give.
pub(crate) fn render(package: &str) -> Result<String, String> {
    let key = "\"configurationAttributes\": {";
    let start = package
        .find(key)
        .ok_or("editors/vscode/package.json has no \"configurationAttributes\" object")?;
    let open = start + key.len() - 1;
    let close = matching_brace(package, open)
        .ok_or("editors/vscode/package.json: \"configurationAttributes\" is not closed")?;
    let indent: String = package[..start].rsplit('\n').next().unwrap_or("").to_owned();
    let mut out = String::from("{\n");
    let pad = |n: usize| format!("{indent}{}", "  ".repeat(n));
    out.push_str(&format!("{}\"launch\": {{\n", pad(1)));
    let required: Vec<String> =
        SETTINGS.iter().filter(|s| s.required).map(|s| quote(s.key)).collect();
    out.push_str(&format!("{}\"required\": [{}],\n", pad(2), required.join(", ")));
    out.push_str(&format!("{}\"properties\": {{\n", pad(2)));
    for (i, s) in SETTINGS.iter().enumerate() {
        let mut fields = match s.kind {
            Kind::String => vec!["\"type\": \"string\"".to_owned()],
            Kind::Number => vec!["\"type\": \"number\"".to_owned()],
            Kind::NumberOf(values) => {
                let list: Vec<String> = values.iter().map(u32::to_string).collect();
                vec!["\"type\": \"number\"".to_owned(), format!("\"enum\": [{}]", list.join(", "))]
            }
            Kind::Boolean => vec!["\"type\": \"boolean\"".to_owned()],
            Kind::Numbers => vec![
                "\"type\": \"array\"".to_owned(),
                "\"items\": { \"type\": \"number\" }".to_owned(),
            ],
            Kind::List => vec!["\"type\": \"array\"".to_owned()],
            Kind::Object => vec!["\"type\": \"object\"".to_owned()],
        };
        fields.push(format!("\"description\": {}", quote(s.description)));
        if let Some(d) = s.default {
            fields.push(format!("\"default\": {d}"));
        }
        let comma = if i + 1 < SETTINGS.len() { "," } else { "" };
        out.push_str(&format!("{}{}: {{ {} }}{comma}\n", pad(3), quote(s.key), fields.join(", ")));
    }
    out.push_str(&format!("{}}}\n{}}}\n{indent}}}", pad(2), pad(1)));
    Ok(format!("{}{out}{}", &package[..open], &package[close + 1..]))
}

fn quote(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// The byte index of the `}` that closes the `{` at `open` (strings skipped).
fn matching_brace(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text[open..].char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_is_valid_json_with_every_setting_and_the_rest_unchanged() {
        let package =
            "{\n  \"a\": 1,\n  \"configurationAttributes\": { \"old\": \"}\" },\n  \"b\": [2]\n}\n";
        let text = render(package).expect("rendered");
        let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        let props = &v["configurationAttributes"]["launch"]["properties"];
        for s in SETTINGS {
            assert!(props[s.key]["description"].is_string(), "{}: {text}", s.key);
        }
        assert_eq!(
            v["configurationAttributes"]["launch"]["required"],
            serde_json::json!(["program"])
        );
        assert_eq!(props["waveWidth"]["enum"], serde_json::json!([8, 16, 32, 64]));
        assert_eq!(
            (v["a"].clone(), v["b"].clone()),
            (serde_json::json!(1), serde_json::json!([2]))
        );
        assert!(v["configurationAttributes"].get("old").is_none());
        // Rendering again changes nothing.
        assert_eq!(render(&text).expect("again"), text);
    }
}

#[cfg(test)]
mod nvim {
    use super::*;

    /// The Neovim plugin's example configurations use only keys of the schema (or the ones
    /// every client sets), so a key renamed in `SETTINGS` cannot leave them behind.
    #[test]
    fn the_neovim_configurations_use_only_keys_of_the_schema() {
        let path = crate::root().join("editors/nvim/lua/wave/dap.lua");
        let text = std::fs::read_to_string(&path).expect("dap.lua");
        let start = text.find("local configurations = {").expect("the configurations table");
        let body = &text[start..];
        let end = body.find("\n  }\n").expect("its end");
        let mut keys = Vec::new();
        for line in body[..end].lines().skip(1) {
            // Keys of a configuration sit at six spaces: `      name = ...`.
            let Some(rest) = line.strip_prefix("      ") else { continue };
            if rest.starts_with(' ') {
                continue;
            }
            if let Some((key, _)) = rest.split_once(" = ") {
                keys.push(key.trim().to_owned());
            }
        }
        assert!(keys.iter().any(|k| k == "program"), "{keys:?}");
        for key in &keys {
            let known = SETTINGS.iter().any(|s| s.key == key)
                || ["type", "request", "name"].contains(&key.as_str());
            assert!(known, "dap.lua sets `{key}`, which is not a launch setting");
        }
    }
}
