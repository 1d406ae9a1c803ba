-- WAVE for Neovim: the language server (`wave lsp`), tree-sitter highlighting, previews of the
-- generated GPU code, runs in the emulator and occupancy.
--
--   require("wave").setup({
--     cmd = { "wave", "lsp" },          -- how to start the server
--     settings = { target = "nvidia", waveWidth = 0, liveRegisters = false },
--     parser = nil,                     -- path to a compiled tree-sitter-wave parser (.so)
--   })
--
-- Neovim 0.11 or later: the server is configured with vim.lsp.config and enabled with
-- vim.lsp.enable. On 0.10, setup() starts it with vim.lsp.start from a FileType autocommand.
local M = {}

M.config = {
  cmd = { "wave", "lsp" },
  settings = {},
  parser = nil,
  -- Filetypes whose kernels the server analyses too (set `{}` to keep it to .wave files).
  kernel_filetypes = { "python", "rust", "cpp", "typescript" },
}

local function client(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr or 0, name = "wave" })[1]
end

local function notify(msg, level)
  vim.notify("wave: " .. msg, level or vim.log.levels.INFO)
end

--- Registers the tree-sitter parser, if one is given or found next to the plugin.
local function register_parser(path)
  if not path then
    local here = debug.getinfo(1, "S").source:sub(2)
    local guess = vim.fs.normalize(vim.fs.dirname(here) .. "/../../parser/wave.so")
    if vim.uv.fs_stat(guess) then
      path = guess
    end
  end
  if not path then
    return false
  end
  local ok = pcall(vim.treesitter.language.add, "wave", { path = path })
  if ok then
    vim.api.nvim_create_autocmd("FileType", {
      pattern = "wave",
      callback = function(args)
        pcall(vim.treesitter.start, args.buf, "wave")
      end,
    })
  end
  return ok
end

---@param opts? table
function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", M.config, opts or {})
  vim.filetype.add({ extension = { wave = "wave" } })
  M.parser = register_parser(M.config.parser)
  -- WAVE assembly, and the kernel languages: the server analyses only the kernels of those
  -- files (beside the language's own server), and nothing in a file without kernels.
  local filetypes = { "wave" }
  vim.list_extend(filetypes, M.config.kernel_filetypes or {})
  local server = {
    cmd = M.config.cmd,
    filetypes = filetypes,
    root_markers = { ".git" },
    init_options = { wave = M.config.settings },
    settings = { wave = M.config.settings },
  }
  if vim.lsp.config and vim.lsp.enable then
    vim.lsp.config("wave", server)
    vim.lsp.enable("wave")
  else
    -- Neovim 0.10: no vim.lsp.config.
    vim.api.nvim_create_autocmd("FileType", {
      pattern = filetypes,
      callback = function(args)
        vim.lsp.start({
          name = "wave",
          cmd = server.cmd,
          root_dir = vim.fs.root(args.buf, ".git"),
          init_options = server.init_options,
        }, { bufnr = args.buf })
      end,
    })
  end
end

--- The language of a backend, for the preview buffer's filetype.
local filetypes = { ptx = "asm", hip = "cpp", sycl = "cpp", metal = "cpp", wave = "wave", mir = "text" }

--- A scratch buffer in a split to the right, reused by name.
local function scratch(name, filetype)
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].buftype = "nofile"
    vim.bo[buf].bufhidden = "hide"
    vim.bo[buf].swapfile = false
  end
  vim.bo[buf].filetype = filetype
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    local back = vim.api.nvim_get_current_win()
    vim.cmd("vsplit")
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, buf)
    vim.api.nvim_set_current_win(back)
  end
  return buf, win
end

local function set_lines(buf, lines)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
end

local ns = vim.api.nvim_create_namespace("wave.preview")

--- :WavePreview [target] — the generated code of the kernel under the cursor, in a split that
--- follows edits (and highlights the lines of the instruction under the cursor).
function M.preview(target)
  local src = vim.api.nvim_get_current_buf()
  local c = client(src)
  if not c then
    return notify("the language server is not attached to this buffer", vim.log.levels.ERROR)
  end
  target = target or (M.config.settings.preview or "ptx")
  if not filetypes[target] then
    return notify("unknown target `" .. target .. "` (ptx, hip, sycl, metal)", vim.log.levels.ERROR)
  end
  local name = "wave://" .. target .. "/" .. vim.fn.fnamemodify(vim.api.nvim_buf_get_name(src), ":t")
  local buf = scratch(name, filetypes[target])
  local map = {}
  local function update()
    local pos = vim.api.nvim_win_get_cursor(0)
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(src) },
      target = target,
      position = { line = pos[1] - 1, character = 0 },
    }
    c:request("wave/preview", params, function(err, result)
      if err then
        set_lines(buf, vim.split("; " .. (err.message or "error"), "\n"))
        return
      end
      set_lines(buf, vim.split(result.text, "\n", { plain = true }))
      map = result.lines or {}
    end, src)
  end
  local function highlight()
    local line = vim.api.nvim_win_get_cursor(0)[1] - 1
    vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
    for i, l in ipairs(map) do
      if l == line then
        vim.api.nvim_buf_set_extmark(buf, ns, i - 1, 0, { line_hl_group = "Visual" })
      end
    end
  end
  local group = vim.api.nvim_create_augroup("wave.preview." .. src, { clear = true })
  vim.api.nvim_create_autocmd({ "TextChanged", "TextChangedI" }, { group = group, buffer = src, callback = update })
  vim.api.nvim_create_autocmd("CursorMoved", { group = group, buffer = src, callback = highlight })
  update()
  return buf
end

--- The kernel whose `.kernel` line is at or above the cursor.
local function kernel_at_cursor()
  local line = vim.api.nvim_win_get_cursor(0)[1]
  local lines = vim.api.nvim_buf_get_lines(0, 0, line, false)
  for i = #lines, 1, -1 do
    local name = lines[i]:match("^%s*%.kernel%s+([%w_]+)")
    if name then
      return name
    end
  end
  return nil
end

--- :WaveRun [gpu|compare] — runs the kernel under the cursor in the emulator (the dispatch
--- of its `; wave-run:` comment, its case file, or defaults), on the first CUDA GPU (`gpu`),
--- or on both with each buffer compared (`compare`), and shows the result in a split.
function M.run(done, device)
  local src = vim.api.nvim_get_current_buf()
  local c = client(src)
  if not c then
    return notify("the language server is not attached to this buffer", vim.log.levels.ERROR)
  end
  local names = { gpu = "cuda", cuda = "cuda", compare = "compare", emulator = "emulator" }
  if device and device ~= "" and not names[device] then
    return notify(("unknown device `%s`: use gpu or compare"):format(device), vim.log.levels.ERROR)
  end
  local args = { uri = vim.uri_from_bufnr(src), kernel = kernel_at_cursor(), device = names[device or ""] }
  c:request("workspace/executeCommand", { command = "wave.run", arguments = { args } }, function(err, r)
    local buf = scratch("wave://run", "text")
    if err then
      set_lines(buf, { "wave run failed: " .. (err.message or "error") })
    else
      local on = (r.device and r.device ~= "emulator") and (" on " .. r.device) or ""
      local out = { ("wave run %s (%s)%s: %s"):format(r.kernel, r.from, on, r.ok and "ok" or "FAILED") }
      if r.trap ~= vim.NIL and r.trap then
        table.insert(out, "trap: " .. r.trap.message)
      end
      for _, d in ipairs(r.dumps or {}) do
        table.insert(out, ("%d %s[%d]: %s"):format(d.offset, d.type, #d.values, table.concat(d.values, " ")))
      end
      for _, m in ipairs(r.mismatches or {}) do
        table.insert(out, "expected: " .. m)
      end
      for _, cmp in ipairs(r.comparison or {}) do
        local what = ("%d %s[%d]"):format(cmp.offset, cmp.type, cmp.count)
        if cmp.agree then
          table.insert(out, "GPU and emulator agree: " .. what)
        else
          local first = {}
          for _, f in ipairs(cmp.first) do
            table.insert(first, ("[%d] emulator %s, GPU %s"):format(f.index, f.emulator, f.gpu))
          end
          table.insert(out, ("GPU and emulator differ: %s, %d elements; first: %s"):format(what, cmp.differing, table.concat(first, "; ")))
        end
      end
      for k, v in pairs(r.stats or {}) do
        table.insert(out, ("%s: %s"):format(k, tostring(v)))
      end
      set_lines(buf, out)
    end
    if done then
      done(buf)
    end
  end, src)
end

--- :WaveOccupancy — each kernel's occupancy (the inlay hints of the `.kernel` lines).
function M.occupancy(done)
  local src = vim.api.nvim_get_current_buf()
  local c = client(src)
  if not c then
    return notify("the language server is not attached to this buffer", vim.log.levels.ERROR)
  end
  local n = vim.api.nvim_buf_line_count(src)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(src) },
    range = { start = { line = 0, character = 0 }, ["end"] = { line = n, character = 0 } },
  }
  c:request("textDocument/inlayHint", params, function(err, hints)
    local lines = {}
    for _, h in ipairs(hints or {}) do
      local label = type(h.label) == "table" and h.label[1].value or h.label
      if label:match("^R=") then
        local text = vim.api.nvim_buf_get_lines(src, h.position.line, h.position.line + 1, false)[1] or ""
        table.insert(lines, (text:match("%.kernel%s+([%w_]+)") or "?") .. ": " .. label)
      end
    end
    local msg = err and ("occupancy failed: " .. err.message) or table.concat(lines, "\n")
    notify(msg ~= "" and msg or "no kernel assembles")
    if done then
      done(lines)
    end
  end, src)
end

return M
