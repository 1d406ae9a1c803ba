-- The WAVE commands. `require("wave").setup()` starts the language server; these commands work
-- once it is attached to the buffer.
if vim.g.loaded_wave then
  return
end
vim.g.loaded_wave = true

local targets = { "ptx", "hip", "sycl", "metal" }

vim.api.nvim_create_user_command("WavePreview", function(opts)
  require("wave").preview(opts.args ~= "" and opts.args or nil)
end, {
  nargs = "?",
  complete = function()
    return targets
  end,
  desc = "WAVE: show the PTX, HIP, SYCL or Metal code of the kernel under the cursor (follows edits)",
})

vim.api.nvim_create_user_command("WaveRun", function(opts)
  require("wave").run(nil, opts.args)
end, {
  nargs = "?",
  complete = function()
    return { "gpu", "compare" }
  end,
  desc = "WAVE: run the kernel under the cursor in the emulator, or on the GPU (gpu), or both compared (compare)",
})

vim.api.nvim_create_user_command("WaveOccupancy", function()
  require("wave").occupancy()
end, { desc = "WAVE: each kernel's occupancy on the chosen target" })
