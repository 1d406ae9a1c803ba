-- Headless Neovim: the nvim-dap adapter definition of editors/nvim starts `wave dap` the way
-- nvim-dap does (an executable adapter on stdio) and the adapter answers.
-- Usage: nvim --headless --clean -l dap_adapter.lua REPO_ROOT WAVE_BINARY CASE_DIR
local root, wave, dir = arg[1], arg[2], arg[3]
local function fail(msg)
  io.stderr:write("dap_adapter.lua: " .. msg .. "\n")
  os.exit(1)
end

-- A stand-in for nvim-dap's module table: setup() only fills adapters and configurations.
package.loaded.dap = { adapters = {}, configurations = {} }
package.path = root .. "/editors/nvim/lua/?.lua;" .. package.path
require("wave.dap").setup({ command = wave })
local dap = package.loaded.dap
local adapter = dap.adapters.wave
if not (adapter and adapter.type == "executable" and adapter.args[1] == "dap") then
  fail("no executable adapter: " .. vim.inspect(adapter))
end

-- The configuration's program is the case file next to the buffer when there is one.
vim.cmd.edit(dir .. "/add.wave")
local program = dap.configurations.wave[1].program()
if program ~= dir .. "/add.toml" then
  fail("program is " .. tostring(program))
end

-- Start the adapter as nvim-dap would and speak to it.
local out = {}
local job = vim.system({ adapter.command, unpack(adapter.args) }, {
  stdin = true,
  stdout = function(_, data)
    if data then
      table.insert(out, data)
    end
  end,
})
local function send(seq, command, arguments)
  local body = vim.json.encode({ seq = seq, type = "request", command = command, arguments = arguments })
  job:write("Content-Length: " .. #body .. "\r\n\r\n" .. body)
end
local function wait_for(text)
  if not vim.wait(10000, function()
    return table.concat(out):find(text, 1, true) ~= nil
  end) then
    fail("no `" .. text .. "` in " .. table.concat(out))
  end
end
send(1, "initialize", { adapterID = "wave" })
wait_for('"supportsStepBack":true')
send(2, "launch", { program = program, stopOnEntry = true })
send(3, "configurationDone", vim.empty_dict())
wait_for('"reason":"entry"')
send(4, "evaluate", { expression = "sr_lane_id + 100", context = "repl" })
wait_for('"result":"100')
send(5, "disconnect", vim.empty_dict())
local done = job:wait(10000)
if done.code ~= 0 then
  fail("wave dap exited with " .. tostring(done.code))
end
os.exit(0)
