Content-Length: 8

not jsonContent-Length: 2

ÿþContent-Length: 2

{}Content-Length: 2

[]Content-Length: 4

nullContent-Length: 46

[{"jsonrpc":"2.0","id":9,"method":"shutdown"}]Content-Length: 60

{"jsonrpc":"2.0","id":1.5,"method":"initialize","params":{}}Content-Length: 59

{"jsonrpc":"2.0","id":[],"method":"initialize","params":{}}Content-Length: 59

{"jsonrpc":"2.0","id":{},"method":"initialize","params":{}}Content-Length: 42

{"id":2,"method":"initialize","params":{}}Content-Length: 39

{"jsonrpc":"2.0","id":3,"method":"$/x"}Content-Length: 75

{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}Content-Length: 52

{"jsonrpc":"2.0","method":"initialized","params":{}}Content-Length: 166

{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a.wave","languageId":"wave","version":1,"text":"\ud83d .kernel k\n.end\n"}}}Content-Length: 119

{"jsonrpc":"2.0","id":4,"method":"textDocument/semanticTokens/full","params":{"textDocument":{"uri":"file:///a.wave"}}}Content-Length: 44

{"jsonrpc":"2.0","id":5,"method":"shutdown"}Content-Length: 33

{"jsonrpc":"2.0","method":"exit"}