-- :checkhealth wave
local M = {}

function M.check()
  local health = vim.health
  health.start("wave")
  if vim.fn.has("nvim-0.11") == 1 then
    health.ok("Neovim " .. tostring(vim.version()) .. " (vim.lsp.config and vim.lsp.enable)")
  elseif vim.fn.has("nvim-0.10") == 1 then
    health.warn("Neovim 0.10: the server is started with vim.lsp.start; 0.11 or later is recommended")
  else
    health.error("Neovim 0.10 or later is needed")
  end
  local config = require("wave").config
  local exe = config.cmd[1]
  if vim.fn.executable(exe) == 1 then
    local version = vim.fn.system({ exe, "--version" })
    health.ok(("`%s` found: %s"):format(exe, vim.trim(version)))
  else
    health.error(("`%s` is not executable"):format(exe), {
      "install it with `cargo install --path server/cli` from the WAVE repository",
      "or give its path: require('wave').setup({ cmd = { '/path/to/wave', 'lsp' } })",
    })
  end
  local clients = vim.lsp.get_clients({ name = "wave" })
  if #clients > 0 then
    health.ok(("the language server is running (%d client%s)"):format(#clients, #clients == 1 and "" or "s"))
  else
    health.info("the language server is not running: open a .wave file")
  end
  if pcall(vim.treesitter.language.inspect, "wave") then
    health.ok("the tree-sitter parser for wave is registered")
  else
    health.warn("no tree-sitter parser for wave: highlighting falls back to the language server's semantic tokens", {
      "compile tree-sitter-wave/src/parser.c to parser/wave.so in this plugin, or pass `parser =` to setup()",
    })
  end
  if pcall(require, "dap") then
    health.ok("nvim-dap is installed: require('wave.dap').setup() adds the debugger")
  else
    health.info("nvim-dap is not installed (optional, for debugging)")
  end
end

return M
