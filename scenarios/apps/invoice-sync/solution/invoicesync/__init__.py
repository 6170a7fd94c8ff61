"""invoicesync: copy invoices from a paginated upstream into SQLite and show them."""
