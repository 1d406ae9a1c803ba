-- Headless Neovim 0.11 drives `wave lsp` through its own LSP client (vim.lsp.config /
-- vim.lsp.enable): diagnostics, hover, completion, definition, inlay hints and code lenses.
-- Usage: nvim --headless --clean -l nvim_lsp.lua WAVE_BINARY FILE.wave RESULT.json
-- Writes what it saw to RESULT.json and exits 0; exits 1 with a message on the first failure.

local wave, path, out = arg[1], arg[2], arg[3]
local results = {}

local function fail(msg)
  io.stderr:write('nvim_lsp.lua: ' .. msg .. '\n')
  os.exit(1)
end

local function check(cond, msg)
  if not cond then
    fail(msg)
  end
end

vim.filetype.add({ extension = { wave = 'wave' } })
vim.lsp.config('wave', {
  cmd = { wave, 'lsp' },
  filetypes = { 'wave' },
  root_markers = { '.git' },
})
vim.lsp.enable('wave')

vim.cmd.edit(path)
check(vim.bo.filetype == 'wave', 'filetype is ' .. vim.bo.filetype)
check(vim.wait(10000, function()
  return #vim.lsp.get_clients({ bufnr = 0, name = 'wave' }) > 0
end), 'the wave client did not attach')
local client = vim.lsp.get_clients({ bufnr = 0, name = 'wave' })[1]
check(vim.wait(10000, function()
  return client.initialized
end), 'the client did not initialize')
results.encoding = client.offset_encoding

-- Diagnostics (Neovim 0.11 pulls them: the server advertises diagnosticProvider to it).
check(vim.wait(10000, function()
  return #vim.diagnostic.get(0) > 0
end), 'no diagnostics arrived')
results.diagnostics = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(results.diagnostics, { code = d.code, lnum = d.lnum, col = d.col, message = d.message })
end

-- Requests through the client at a position (0-based line and byte column).
local function request(method, lnum, col, extra)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(0) },
    position = { line = lnum, character = col },
  }
  for k, v in pairs(extra or {}) do
    params[k] = v
  end
  local responses = vim.lsp.buf_request_sync(0, method, params, 10000)
  check(responses ~= nil, method .. ' timed out')
  for _, r in pairs(responses) do
    check(r.err == nil, method .. ' failed: ' .. vim.inspect(r.err))
    return r.result
  end
end

local function find(pattern)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
    local col = line:find(pattern, 1, true)
    if col then
      return i - 1, col - 1
    end
  end
  fail('no line contains ' .. pattern)
end

local l, c = find('icmp.gt')
local hover = request('textDocument/hover', l, c + 1)
results.hover = hover and hover.contents.value or vim.NIL

l, c = find('iadd r2, r2, r4')
local completion = request('textDocument/completion', l, c + 12)
results.completion = {}
for _, item in ipairs(completion.items or completion) do
  table.insert(results.completion, item.label)
end

l, c = find('call helper')
local def = request('textDocument/definition', l, c + 6)
results.definition = def and (def.range or def[1].range) or vim.NIL

vim.lsp.inlay_hint.enable(true, { bufnr = 0 })
check(vim.wait(10000, function()
  return #vim.lsp.inlay_hint.get({ bufnr = 0 }) > 0
end), 'no inlay hints')
results.inlay_hints = {}
for _, h in ipairs(vim.lsp.inlay_hint.get({ bufnr = 0 })) do
  local label = h.inlay_hint.label
  if type(label) == 'table' then
    label = label[1].value
  end
  table.insert(results.inlay_hints, label)
end

vim.lsp.codelens.refresh({ bufnr = 0 })
check(vim.wait(10000, function()
  return #vim.lsp.codelens.get(0) > 0
end), 'no code lenses')
results.code_lenses = {}
for _, lens in ipairs(vim.lsp.codelens.get(0)) do
  table.insert(results.code_lenses, lens.command and lens.command.title or vim.NIL)
end

-- Run the kernel the way the lens does: workspace/executeCommand through the client.
local run = vim.lsp.buf_request_sync(0, 'workspace/executeCommand', {
  command = 'wave.run',
  arguments = { { uri = vim.uri_from_bufnr(0), kernel = 'divergent' } },
}, 20000)
for _, r in pairs(run or {}) do
  check(r.err == nil, 'wave.run failed: ' .. vim.inspect(r.err))
  results.run = r.result
end

local f = assert(io.open(out, 'w'))
f:write(vim.json.encode(results))
f:close()
vim.lsp.stop_client(client.id)
os.exit(0)
