-- Headless Neovim 0.11 drives `wave lsp` through its own LSP client on a kernel written in
-- Python or Rust (the server is enabled for those filetypes beside the language's own):
-- hover, inlay hints, code lenses, a run, then a mistake typed into the buffer and its
-- diagnostic.
-- Usage: nvim --headless --clean -l nvim_kernel.lua WAVE FILE STORE BROKEN RESULT.json
-- (STORE is a line's text to hover and replace by BROKEN.) Writes what it saw to
-- RESULT.json and exits 0; exits 1 with a message on the first failure.

local wave, path, store, broken, out = arg[1], arg[2], arg[3], arg[4], arg[5]
local results = {}

local function fail(msg)
  io.stderr:write('nvim_kernel.lua: ' .. msg .. '\n')
  os.exit(1)
end

local function check(cond, msg)
  if not cond then
    fail(msg)
  end
end

vim.lsp.config('wave', {
  cmd = { wave, 'lsp' },
  filetypes = { 'wave', 'python', 'rust', 'cpp', 'typescript' },
  root_markers = { '.git' },
})
vim.lsp.enable('wave')

vim.cmd.edit(path)
results.filetype = vim.bo.filetype
check(vim.wait(10000, function()
  return #vim.lsp.get_clients({ bufnr = 0, name = 'wave' }) > 0
end), 'the wave client did not attach')
local client = vim.lsp.get_clients({ bufnr = 0, name = 'wave' })[1]
check(vim.wait(10000, function()
  return client.initialized
end), 'the client did not initialize')

-- The last line holding `pattern` (a docstring above may quote the code).
local function find(pattern)
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  for i = #lines, 1, -1 do
    local col = lines[i]:find(pattern, 1, true)
    if col then
      return i - 1, col - 1
    end
  end
  fail('no line contains ' .. pattern)
end

local function request(method, params)
  local responses = vim.lsp.buf_request_sync(0, method, params, 20000)
  check(responses ~= nil, method .. ' timed out')
  for _, r in pairs(responses) do
    check(r.err == nil, method .. ' failed: ' .. vim.inspect(r.err))
    return r.result
  end
end

local l, c = find(store)
local hover = request('textDocument/hover', {
  textDocument = { uri = vim.uri_from_bufnr(0) },
  position = { line = l, character = c },
})
results.hover = hover and hover.contents.value or vim.NIL

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

results.run = request('workspace/executeCommand', {
  command = 'wave.run',
  arguments = { { uri = vim.uri_from_bufnr(0), kernel = 'vector_add' } },
})

-- A mistake typed into the buffer: its diagnostic arrives (pulled by Neovim 0.11).
local line = vim.api.nvim_buf_get_lines(0, l, l + 1, false)[1]
local s, e = line:find(store, 1, true)
vim.api.nvim_buf_set_lines(0, l, l + 1, false, { line:sub(1, s - 1) .. broken .. line:sub(e + 1) })
check(vim.wait(10000, function()
  return #vim.diagnostic.get(0) > 0
end), 'no diagnostics arrived after the mistake')
results.diagnostics = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(results.diagnostics, { code = d.code, lnum = d.lnum, col = d.col, message = d.message })
end

local f = assert(io.open(out, 'w'))
f:write(vim.json.encode(results))
f:close()
vim.lsp.stop_client(client.id)
os.exit(0)
