.ascii ""
