-- nvim-dap adapter and configurations for WAVE (`wave dap`, the Debug Adapter Protocol on stdio).
--
--   require("wave.dap").setup()                      -- `wave` on PATH
--   require("wave.dap").setup({ command = "/path/to/wave" })
--
-- Then :DapContinue on a .wave file, or on a kernel written in Python, Rust, C++ or
-- TypeScript (its case file next to it gives the dispatch; breakpoints go on its lines). Everything works through nvim-dap's plain views:
-- the Scopes (Lanes, Registers with one child per lane, Predicates, Special registers,
-- Divergence and calls, Local memory), the REPL (`r3`, `r3[5]`, `ballot(p0)`, `lane 5` to change
-- the focus lane, `wg 1,0,0` to go to a workgroup, `help`), conditional breakpoints
-- (`lane == 5 && r3 > 10`), log points and stepping back (`require("dap").step_back()`).
local M = {}

--- The launch configuration from a case file next to the buffer (NAME.toml), or defaults.
local function program()
  local file = vim.api.nvim_buf_get_name(0)
  local case = file:gsub("%.%w+$", ".toml")
  if case ~= file and vim.uv.fs_stat(case) then
    return case
  end
  return file
end

---@param opts? { command?: string }
function M.setup(opts)
  opts = opts or {}
  local ok, dap = pcall(require, "dap")
  if not ok then
    vim.notify("wave.dap: nvim-dap is not installed", vim.log.levels.WARN)
    return
  end
  dap.adapters.wave = {
    type = "executable",
    command = opts.command or "wave",
    args = { "dap" },
  }
  local configurations = {
    {
      type = "wave",
      request = "launch",
      name = "Debug this kernel (case file next to it, or defaults)",
      program = program,
      stopOnEntry = true,
    },
    {
      type = "wave",
      request = "launch",
      name = "Debug this kernel with a grid and W",
      program = program,
      grid = function()
        return vim.tbl_map(tonumber, vim.split(vim.fn.input("grid X,Y,Z: ", "1,1,1"), ","))
      end,
      waveWidth = function()
        return tonumber(vim.fn.input("wave width: ", "32"))
      end,
      stopOnEntry = true,
    },
  }
  for _, ft in ipairs({ "wave", "python", "rust", "cpp", "typescript" }) do
    dap.configurations[ft] = dap.configurations[ft] or {}
    vim.list_extend(dap.configurations[ft], configurations)
  end
end

return M
