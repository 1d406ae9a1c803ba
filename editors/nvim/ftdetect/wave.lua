-- `.wave` files are WAVE assembly.
vim.filetype.add({ extension = { wave = "wave" } })
