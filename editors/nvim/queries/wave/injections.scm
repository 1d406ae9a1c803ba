; WAVE assembly embeds no other language.
