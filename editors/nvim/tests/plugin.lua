-- Headless Neovim 0.11: the WAVE plugin of editors/nvim loads, tree-sitter highlighting applies,
-- the language server answers, :WavePreview ptx shows PTX, :WaveRun and :WaveOccupancy work,
-- and :checkhealth wave runs.
-- Usage: nvim --headless --clean -l plugin.lua REPO_ROOT WAVE_BINARY PARSER.so FILE.wave RESULT.json
local root, wave, parser, file, out = arg[1], arg[2], arg[3], arg[4], arg[5]
local results = {}
local function fail(msg)
  io.stderr:write("plugin.lua: " .. msg .. "\n")
  os.exit(1)
end
local function check(cond, msg)
  if not cond then
    fail(msg)
  end
end

vim.opt.runtimepath:prepend(root .. "/editors/nvim")
vim.cmd("runtime! plugin/wave.lua")
vim.cmd("runtime! ftdetect/wave.lua")
require("wave").setup({ cmd = { wave, "lsp" }, parser = parser })
check(vim.fn.exists(":WavePreview") == 2, ":WavePreview is not defined")

vim.cmd.edit(file)
check(vim.bo.filetype == "wave", "filetype is " .. vim.bo.filetype)

-- Tree-sitter highlighting: the mnemonic and the comment have captures.
check(vim.treesitter.highlighter.active[vim.api.nvim_get_current_buf()] ~= nil, "tree-sitter highlighting is not active")
vim.treesitter.get_parser(0, "wave"):parse(true)
local function captures_at(pattern)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
    local col = line:find(pattern, 1, true)
    if col then
      local caps = vim.treesitter.get_captures_at_pos(0, i - 1, col - 1)
      return vim.tbl_map(function(c)
        return c.capture
      end, caps)
    end
  end
  return {}
end
results.mnemonic = captures_at("icmp.gt")
results.comment = captures_at("; A divergent")
results.register = captures_at("r2, r2")

-- The language server attaches and answers.
check(vim.wait(10000, function()
  local c = vim.lsp.get_clients({ bufnr = 0, name = "wave" })[1]
  return c ~= nil and c.initialized
end), "the language server did not attach")
check(vim.wait(10000, function()
  return #vim.diagnostic.get(0) > 0
end), "no diagnostics")
results.diagnostics = vim.tbl_map(function(d)
  return d.code
end, vim.diagnostic.get(0))
local hover = vim.lsp.buf_request_sync(0, "textDocument/hover", {
  textDocument = { uri = vim.uri_from_bufnr(0) },
  position = { line = 10, character = 9 },
}, 10000)
for _, r in pairs(hover or {}) do
  results.hover = r.result and r.result.contents.value or vim.NIL
end

-- :WavePreview ptx shows PTX and follows edits.
local src = vim.api.nvim_get_current_buf()
vim.api.nvim_win_set_cursor(0, { 10, 4 })
vim.cmd("WavePreview ptx")
local preview = vim.fn.bufnr("wave://ptx/divergent.wave")
check(preview ~= -1, "no preview buffer")
check(vim.wait(10000, function()
  return table.concat(vim.api.nvim_buf_get_lines(preview, 0, -1, false), "\n"):find(".entry divergent", 1, true) ~= nil
end), "the preview shows no PTX")
results.preview_windows = #vim.api.nvim_tabpage_list_wins(0)
results.preview_filetype = vim.bo[preview].filetype
vim.api.nvim_buf_set_lines(src, 10, 11, false, { "        icmp.gt p0, r2, 12" })
vim.api.nvim_exec_autocmds("TextChanged", { buffer = src })
check(vim.wait(10000, function()
  return table.concat(vim.api.nvim_buf_get_lines(preview, 0, -1, false), "\n"):find("12;", 1, true) ~= nil
end), "the preview did not follow the edit")

-- :WaveRun and :WaveOccupancy.
local ran = nil
require("wave").run(function(buf)
  ran = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end)
check(vim.wait(20000, function()
  return ran ~= nil
end), ":WaveRun gave no result")
results.run = ran
-- :WaveRun compare: on a machine without a GPU, the server's one-line reason.
local compared = nil
require("wave").run(function(buf)
  compared = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end, "compare")
check(vim.wait(60000, function()
  return compared ~= nil
end), ":WaveRun compare gave no result")
results.compare = compared
local occ = nil
require("wave").occupancy(function(lines)
  occ = lines
end)
check(vim.wait(10000, function()
  return occ ~= nil
end), ":WaveOccupancy gave no result")
results.occupancy = occ

-- :checkhealth wave.
vim.cmd("checkhealth wave")
results.health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")

local f = assert(io.open(out, "w"))
f:write(vim.json.encode(results))
f:close()
os.exit(0)
